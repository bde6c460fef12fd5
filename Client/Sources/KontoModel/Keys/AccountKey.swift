/// A typed account key, the server-side form of SpeziAccount's `AccountKey`.
///
/// An app declares a key in a few lines and reaches it by key path through ``AccountKeys``:
/// ```swift
/// struct BiographyKey: AccountKey {
///     typealias Value = String
///     static let identifier = "biography"
///     static let name = "Biography"
///     static let category = AccountKeyCategory.personalDetails
/// }
/// extension AccountKeys {
///     var biography: BiographyKey.Type { BiographyKey.self }
/// }
/// details[\.biography] = "Swift on the server"
/// ```
/// `valueType` and `initialValue` are inferred for `String`, `Bool`, integers, `Double`, `[String]`,
/// ``CalendarDate``, ``PersonName`` and `String`-backed enums; other `Value` types declare both.
/// Services, which cannot compile the app's types, know the same key from the deployment key schema.
public protocol AccountKey: Sendable {
    /// The value type; it is stored in JSON form through `Codable`.
    associatedtype Value: Codable & Sendable & Equatable

    /// The stable wire name.
    static var identifier: String { get }
    /// The display name.
    static var name: String { get }
    static var category: AccountKeyCategory { get }
    /// The value a signup form starts with.
    static var initialValue: InitialValue<Value> { get }
    static var options: AccountKeyOptions { get }
    /// The type services check values against; inferred for common `Value` types.
    static var valueType: AccountValueType { get }
    /// Rules the key carries wherever it is configured (string and string-list keys).
    static var rules: [ValidationRule] { get }
    /// A secret value (the password) never appears in default encodings or descriptions.
    static var isSecret: Bool { get }

    /// The value to read when the key itself is absent (e.g. `userId` falls back to `accountId`).
    static func fallback(in details: AccountDetails) -> Value?
}

extension AccountKey {
    public static var options: AccountKeyOptions { .default }
    public static var rules: [ValidationRule] { [] }
    public static var isSecret: Bool { false }

    public static func fallback(in details: AccountDetails) -> Value? {
        nil
    }

    /// The description services use for this key.
    public static var descriptor: AccountKeyDescriptor {
        AccountKeyDescriptor(
            identifier: identifier,
            name: name,
            category: category,
            valueType: valueType,
            options: options,
            rules: rules,
            isSecret: isSecret,
            initialValue: initialValue.accountValue
        )
    }
}

extension AccountKey where Value == String {
    public static var valueType: AccountValueType { .string }
    public static var initialValue: InitialValue<Value> { .empty("") }
}

extension AccountKey where Value == Bool {
    public static var valueType: AccountValueType { .bool }
    public static var initialValue: InitialValue<Value> { .default(false) }
}

extension AccountKey where Value: FixedWidthInteger {
    public static var valueType: AccountValueType { .integer }
    public static var initialValue: InitialValue<Value> { .empty(0) }
}

extension AccountKey where Value == Double {
    public static var valueType: AccountValueType { .double }
    public static var initialValue: InitialValue<Value> { .empty(0) }
}

extension AccountKey where Value == [String] {
    public static var valueType: AccountValueType { .stringList }
    public static var initialValue: InitialValue<Value> { .empty([]) }
}

extension AccountKey where Value == CalendarDate {
    public static var valueType: AccountValueType { .date }
    public static var initialValue: InitialValue<Value> { .none }
}

extension AccountKey where Value == PersonName {
    public static var valueType: AccountValueType { .personName }
    public static var initialValue: InitialValue<Value> { .empty(PersonName()) }
}

extension AccountKey where Value: CaseIterable & RawRepresentable, Value.RawValue == String {
    public static var valueType: AccountValueType { .enumeration(cases: Value.allCases.map(\.rawValue)) }
    public static var initialValue: InitialValue<Value> { .none }
}

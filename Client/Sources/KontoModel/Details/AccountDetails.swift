/// The values of one account, keyed by identifier, the server-side form of SpeziAccount's `AccountDetails`.
///
/// Values are stored dynamically (``AccountValue``) so services can hold keys whose Swift types they never
/// compiled; Swift code reads and writes them typed, by key path:
/// ```swift
/// var details = AccountDetails()
/// details[\.dateOfBirth] = CalendarDate(year: 1990, month: 5, day: 17)
/// let email = details[\.email]   // falls back to userId for email-address userIds
/// ```
/// It encodes as one flat JSON object `{identifier: value}`. Secret values (the password) are left out of
/// that encoding and of ``description``; see ``encoded(includingSecrets:)``.
public struct AccountDetails: Sendable {
    /// How this account logs in; decides whether ``EmailKey`` falls back to the userId. Not encoded.
    public var userIdType: UserIdType
    private var values: [String: AccountValue]
    /// Identifiers whose values must not leave the service in default encodings.
    private var secretIdentifiers: Set<String> = Self.defaultSecretIdentifiers
    /// Shared, so making details (once per load) does not build a set each time.
    private static let defaultSecretIdentifiers: Set<String> = [PasswordKey.identifier]

    /// Creates empty details.
    public init(userIdType: UserIdType = .emailAddress) {
        self.userIdType = userIdType
        self.values = [:]
    }

    /// Creates details from stored values, without checking them (see ``decode(json:schema:unknownKeys:userIdType:)``).
    public init(values: [String: AccountValue], userIdType: UserIdType = .emailAddress) {
        self.userIdType = userIdType
        self.values = values
    }

    /// The identifiers that have a value, sorted.
    public var identifiers: [String] {
        values.keys.sorted()
    }

    public var isEmpty: Bool {
        values.isEmpty
    }

    public var count: Int {
        values.count
    }

    public func contains(_ identifier: String) -> Bool {
        values[identifier] != nil
    }

    /// Whether `identifier` holds a secret value.
    public func isSecret(_ identifier: String) -> Bool {
        secretIdentifiers.contains(identifier)
    }

    /// The stored value for an identifier; setting `nil` removes it.
    public subscript(identifier identifier: String) -> AccountValue? {
        get { values[identifier] }
        set { values[identifier] = newValue }
    }

    /// Marks an identifier as secret, for secret keys known only from a schema.
    public mutating func markSecret(_ identifier: String) {
        secretIdentifiers.insert(identifier)
    }

    /// The details with only the identifiers for which `isIncluded` is true.
    public func filter(_ isIncluded: (String) -> Bool) -> AccountDetails {
        var result = self
        result.values = values.filter { isIncluded($0.key) }
        return result
    }

    /// Adds or replaces the values of `other`.
    public mutating func merge(_ other: AccountDetails) {
        values.merge(other.values) { _, new in new }
        secretIdentifiers.formUnion(other.secretIdentifiers)
    }

    /// Every stored value, secrets included; for storage inside a service, never for a client.
    public var storedValues: [String: AccountValue] {
        values
    }

    /// The stored values a client may see: everything except secrets.
    public var publicValues: [String: AccountValue] {
        values.filter { !secretIdentifiers.contains($0.key) }
    }
}

extension AccountDetails: Hashable {
    /// Equal when the values are equal; the userId type is context, not content.
    public static func == (lhs: AccountDetails, rhs: AccountDetails) -> Bool {
        lhs.values == rhs.values
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(values)
    }
}

/// What may be done with a key's value.
public struct AccountKeyOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The value is shown to the account holder (e.g. in `GET /v1/account`).
    public static let display = AccountKeyOptions(rawValue: 1 << 0)
    /// The value may be changed after signup.
    public static let mutable = AccountKeyOptions(rawValue: 1 << 1)

    /// Displayed and mutable, the default for keys.
    public static let `default`: AccountKeyOptions = [.display, .mutable]
}

/// Encoded as a list of names (`["display", "mutable"]`) so the published schema reads well.
extension AccountKeyOptions: Codable {
    private static let names: [(String, AccountKeyOptions)] = [("display", .display), ("mutable", .mutable)]

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        var options: AccountKeyOptions = []
        for name in try container.decode([String].self) {
            guard let option = Self.names.first(where: { $0.0 == name })?.1 else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "Unknown key option \"\(name)\".")
            }
            options.insert(option)
        }
        self = options
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Self.names.filter { contains($0.1) }.map(\.0))
    }
}

/// A database URL that cannot be used; the message never repeats the URL, which may hold a password.
public struct PostgresSettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    public static let code = "configuration.invalidDatabaseURL"

    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String {
        "\(Self.code): \(message)"
    }
}

/// Why migrating a database was refused or failed. Never retryable: a person has to look at it.
///
/// Connection failures during a migration are reported as ``StorageUnavailableError`` instead.
public struct PostgresMigrationError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// The binary's own list is malformed (versions not positive and strictly increasing, empty names or SQL).
        public static let invalidMigrations = Code(rawValue: "migration.invalidMigrations")
        /// The database records a version this binary does not know, typically from a newer release.
        public static let unknownVersion = Code(rawValue: "migration.unknownVersion")
        /// The database records a known version under another name: the schemas have diverged.
        public static let nameMismatch = Code(rawValue: "migration.nameMismatch")
        /// A known migration is missing below the newest recorded one; applying it now would reorder history.
        public static let outOfOrder = Code(rawValue: "migration.outOfOrder")
        /// A migration's SQL failed; its transaction was rolled back.
        public static let failed = Code(rawValue: "migration.failed")
    }

    public let code: Code
    public let message: String
    /// The migration concerned, if one.
    public let version: Int?

    public init(code: Code, version: Int?, message: String) {
        self.code = code
        self.version = version
        self.message = message
    }

    public var isRetryable: Bool { false }

    public var description: String {
        "\(code): \(message)"
    }
}

import Foundation

/// A row of `konto_schema_migrations`.
public struct AppliedMigration: Sendable, Hashable {
    public let version: Int
    public let name: String
    public let appliedAt: Date

    public init(version: Int, name: String, appliedAt: Date) {
        self.version = version
        self.name = name
        self.appliedAt = appliedAt
    }
}

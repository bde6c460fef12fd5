/// One step of a service's schema: applied once, in version order, inside its own transaction.
///
/// The SQL is the service's own code, never input. postgres-nio runs one statement per query (extended protocol),
/// so a migration with several statements lists them separately.
public struct PostgresMigration: Sendable, Hashable {
    /// Positive and strictly increasing within a service's list.
    public let version: Int
    /// Recorded with the version; a database whose record differs from the binary's is refused.
    public let name: String
    public let statements: [String]

    public init(version: Int, name: String, statements: [String]) {
        self.version = version
        self.name = name
        self.statements = statements
    }

    public init(version: Int, name: String, sql: String) {
        self.init(version: version, name: name, statements: [sql])
    }
}

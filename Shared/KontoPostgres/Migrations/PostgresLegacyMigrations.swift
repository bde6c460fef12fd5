/// A service's history from before migrations had namespaces: recorded in `public.konto_schema_migrations`, which
/// every service shared, with its tables in `public`.
///
/// ``PostgresMigrator`` adopts such a history once, when the service's namespace has no record yet: inside the
/// migration lock it runs ``statements`` (moving the tables into the namespace), records the adopted versions in the
/// namespace under their current names (keeping when they were applied), and removes them from the old record, which
/// is dropped once empty. A database whose old record does not hold exactly ``records`` for this service's versions is
/// left alone and refused, so a half-known history is never guessed at.
public struct PostgresLegacyMigrations: Sendable, Hashable {
    /// The versions and names the old code recorded, oldest first; each version must be one of the service's migrations.
    public let records: [(version: Int, name: String)]
    /// Run with `search_path` set to the namespace; the service's own SQL, never input.
    public let statements: [String]

    public init(records: [(version: Int, name: String)], statements: [String]) {
        self.records = records
        self.statements = statements
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.records.elementsEqual(rhs.records) { $0.version == $1.version && $0.name == $1.name } && lhs.statements == rhs.statements
    }

    public func hash(into hasher: inout Hasher) {
        for record in records {
            hasher.combine(record.version)
            hasher.combine(record.name)
        }
        hasher.combine(statements)
    }
}

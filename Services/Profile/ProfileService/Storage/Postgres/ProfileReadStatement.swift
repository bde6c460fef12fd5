import PostgresNIO

/// The batched read: every account asked for in one statement, prepared once per pooled connection by postgres-nio.
///
/// The pool's connections force the generic plan (``PostgresProfileStorage/clientConfiguration(_:)``): an index scan
/// for any number of keys, instead of planning each batch again for its exact array.
struct ProfileReadStatement: PostgresPreparedStatement {
    static let sql = "SELECT account_id, version, details::text FROM profile.accounts WHERE account_id = ANY($1)"

    typealias Row = (String, Int64, String)

    var accountIds: [String]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(accountIds)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}

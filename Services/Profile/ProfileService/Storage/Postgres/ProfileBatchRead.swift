import PostgresNIO

/// The batched read, prepared once per connection (with a forced generic plan, see
/// ``PostgresProfileStorage/readConfiguration(_:)``): a batch then costs the database a bind and an
/// execution, not a parse and a plan as well.
struct ProfileBatchRead: PostgresPreparedStatement {
    static let name = "konto_profile_batch_read"
    static let sql = "SELECT account_id, version, details::text FROM profile_accounts WHERE account_id = ANY($1)"
    static let bindingDataTypes: [PostgresDataType] = [.textArray]

    typealias Row = (accountId: String, version: Int64, document: String)

    var accountIds: [String]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(accountIds)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let (accountId, version, document) = try row.decode((String, Int64, String).self)
        return (accountId, version, document)
    }
}

import PostgresNIO

extension PostgresQuery.StringInterpolation {
    /// The outbox insert of `columns` as one data-modifying `WITH` part's body, for statements that write the events
    /// together with the change they announce (`events AS (\(outboxInsert: columns, schema: "identity", after:
    /// "created"))`): inserted once per row of the part named `after` (one row when the change happened, none when
    /// not), or unconditionally when nil; in their order.
    /// `schema` and `after` are the caller's literals, never input.
    public mutating func appendInterpolation(outboxInsert columns: AccountEventColumns, schema: StaticString, after source: StaticString?) {
        appendLiteral("""
            INSERT INTO \(schema).outbox (event_id, account_id, type, event, occurred_at)
            SELECT e.event_id, e.account_id, e.type, e.event::jsonb, e.occurred_at
            FROM \(source.map { "\($0), " } ?? "")unnest(
            """)
        appendInterpolation(columns.ids)
        appendLiteral("::uuid[], ")
        appendInterpolation(columns.accountIds)
        appendLiteral("::text[], ")
        appendInterpolation(columns.types)
        appendLiteral("::text[], ")
        appendInterpolation(columns.documents)
        appendLiteral("::text[], ")
        appendInterpolation(columns.times)
        appendLiteral("""
            ::timestamptz[])
                WITH ORDINALITY AS e(event_id, account_id, type, event, occurred_at, ordinal)
            ORDER BY e.ordinal
            """)
    }
}

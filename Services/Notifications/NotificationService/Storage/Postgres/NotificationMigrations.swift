import KontoPostgres

/// Notifications' schema, in the `notifications` PostgreSQL schema (its migration namespace), so it can share a
/// database with the other services. Applied at start by ``PostgresNotificationStorage/migrate(logger:)``.
public enum NotificationMigrations {
    public static let namespace = "notifications"

    public static let all: [PostgresMigration] = [
        PostgresMigration(
            version: 1,
            name: "create events, groups, deliveries and dead letters",
            statements: [
                """
                CREATE TABLE events (
                    position bigserial PRIMARY KEY,
                    event_id uuid NOT NULL UNIQUE,
                    account_id text NOT NULL,
                    type text NOT NULL,
                    event jsonb NOT NULL,
                    occurred_at timestamptz NOT NULL,
                    stored_at timestamptz NOT NULL
                )
                """,
                """
                CREATE INDEX events_account ON events (account_id, position)
                """,
                """
                CREATE INDEX events_occurred ON events (occurred_at)
                """,
                """
                CREATE TABLE groups (
                    name text PRIMARY KEY,
                    types text[],
                    created_at timestamptz NOT NULL
                )
                """,
                // One row per event still to be processed by a group. A claim sets claim_id and pushes visible_at to
                // the end of its visibility timeout; an ack deletes the row.
                """
                CREATE TABLE deliveries (
                    group_name text NOT NULL REFERENCES groups (name) ON DELETE CASCADE,
                    position bigint NOT NULL REFERENCES events (position),
                    account_id text NOT NULL,
                    visible_at timestamptz NOT NULL,
                    attempts integer NOT NULL DEFAULT 0,
                    claim_id uuid,
                    last_error text,
                    PRIMARY KEY (group_name, position)
                )
                """,
                // The claim's "no earlier delivery of this account in this group" check.
                """
                CREATE INDEX deliveries_account ON deliveries (group_name, account_id, position)
                """,
                """
                CREATE TABLE dead_letters (
                    group_name text NOT NULL REFERENCES groups (name) ON DELETE CASCADE,
                    position bigint NOT NULL REFERENCES events (position),
                    attempts integer NOT NULL,
                    last_error text,
                    dead_at timestamptz NOT NULL,
                    PRIMARY KEY (group_name, position)
                )
                """,
            ]
        ),
        PostgresMigration(
            version: 2,
            name: "webhook delivery log",
            statements: [
                """
                CREATE TABLE webhook_attempts (
                    id bigserial PRIMARY KEY,
                    endpoint text NOT NULL,
                    event_id uuid NOT NULL,
                    attempt integer NOT NULL,
                    status_code integer,
                    error text,
                    duration_ms integer NOT NULL,
                    attempted_at timestamptz NOT NULL
                )
                """,
                """
                CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint, id)
                """,
            ]
        ),
        // Every queued delivery ran two referential-integrity checks, each a query taking a KEY SHARE lock on the
        // referenced row; all of a group's deliveries lock its one groups row, so concurrent publishes share it
        // through multixacts. The rows are only ever written together (deliveries in the statement that stores
        // their event, groups never deleted), so the storage keeps the invariant itself. Measured with
        // `konto-bench events`: see docs/NOTIFICATIONS.md.
        PostgresMigration(
            version: 3,
            name: "deliveries and dead letters without foreign keys",
            statements: [
                "ALTER TABLE deliveries DROP CONSTRAINT deliveries_group_name_fkey",
                "ALTER TABLE deliveries DROP CONSTRAINT deliveries_position_fkey",
                "ALTER TABLE dead_letters DROP CONSTRAINT dead_letters_group_name_fkey",
                "ALTER TABLE dead_letters DROP CONSTRAINT dead_letters_position_fkey",
            ]
        ),
        // Tails read events in the order of their storing transactions, up to the oldest one still running (see
        // TailCursor): positions come from a sequence when rows are inserted, not when they commit. Events stored
        // before this migration have no transaction and are not tailed (tails start at the present).
        PostgresMigration(
            version: 4,
            name: "events record their storing transaction, for tails",
            statements: [
                "ALTER TABLE events ADD COLUMN txid xid8",
                "ALTER TABLE events ALTER COLUMN txid SET DEFAULT pg_current_xact_id()",
                "CREATE INDEX events_tail ON events (txid, position)",
            ]
        ),
        // One row per deleted account whose events are to be erased (see eraseDeletedAccounts): every other event
        // stored for the account bumps `generation`; an erasure records the generation it erased, so an event stored
        // during or after it is erased by the next one. Kept for the retention period, then pruned.
        PostgresMigration(
            version: 5,
            name: "erasures of deleted accounts' events",
            statements: [
                """
                CREATE TABLE erasures (
                    account_id text PRIMARY KEY,
                    requested_at timestamptz NOT NULL,
                    generation bigint NOT NULL DEFAULT 0,
                    erased_generation bigint,
                    erased_at timestamptz
                )
                """,
                "CREATE INDEX erasures_pending ON erasures (requested_at) WHERE erased_generation IS DISTINCT FROM generation",
            ]
        ),
        // A group belongs to the caller that declared it (docs/PROTOCOL.md, "Who may call what"); one declared before
        // has none and becomes the next declaring caller's.
        PostgresMigration(
            version: 6,
            name: "consumer groups have owners",
            statements: [
                "ALTER TABLE groups ADD COLUMN owner text",
            ]
        ),
        // Every replica learns at once that events or deliveries were stored, by any replica: tails and consumers
        // served here then read at once instead of at their next poll (watchPublished). One notification per
        // inserting statement, sent at commit; PostgreSQL folds identical ones of a transaction.
        PostgresMigration(
            version: 7,
            name: "stored events and deliveries notify every replica",
            statements: [
                """
                CREATE FUNCTION notify_published() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    PERFORM pg_notify('notifications_published', '');
                    RETURN NULL;
                END
                $$
                """,
                "CREATE TRIGGER events_published AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION notify_published()",
                "CREATE TRIGGER deliveries_published AFTER INSERT ON deliveries FOR EACH STATEMENT EXECUTE FUNCTION notify_published()",
            ]
        ),
        // The gateways' cache-holding tails, for notifications.tailBarrier: where each started (its snapshot: what
        // it never gets), what it has acknowledged, and until when the replica serving it vouches for it.
        PostgresMigration(
            version: 8,
            name: "cache-holding tail readers",
            statements: [
                """
                CREATE TABLE tail_readers (
                    reader_id uuid PRIMARY KEY,
                    start_snapshot pg_snapshot,
                    acknowledged_txid xid8 NOT NULL,
                    acknowledged_position bigint NOT NULL,
                    lease_until timestamptz NOT NULL
                )
                """,
            ]
        ),
        // Webhook endpoints added at run time through the admin API (the file's stay in the file): every replica
        // reads them every few seconds. The signing secret is sealed (WebhookSecretSeal): a dump of this database
        // alone signs nothing.
        PostgresMigration(
            version: 9,
            name: "webhook endpoints added at run time",
            statements: [
                """
                CREATE TABLE webhook_endpoints (
                    name text PRIMARY KEY,
                    url text NOT NULL,
                    types text[],
                    sealed_secret text NOT NULL,
                    created_at timestamptz NOT NULL
                )
                """,
            ]
        ),
    ]
}

import KontoEvents
import KontoPostgres

/// The Profile service's schema, applied at start by ``PostgresProfileStorage/migrate(logger:)``, in the `profile`
/// PostgreSQL schema (its migration namespace), so Profile can share a database with other services.
public enum ProfileMigrations {
    /// The PostgreSQL schema holding Profile's tables and its migration record.
    public static let namespace = "profile"

    /// What releases before namespaces left: `public.profile_accounts`, recorded as version 1 in the shared
    /// `public.konto_schema_migrations`. Adopted at the first start of this release: the table moves to
    /// `profile.accounts` with its rows, indexes and constraints.
    public static let legacy = PostgresLegacyMigrations(
        records: [(version: 1, name: "create profile_accounts")],
        statements: [
            "ALTER TABLE public.profile_accounts SET SCHEMA profile",
            "ALTER TABLE profile.profile_accounts RENAME TO accounts",
        ]
    )

    public static let all: [PostgresMigration] = [
        PostgresMigration(
            version: 1,
            name: "create accounts",
            sql: """
                CREATE TABLE accounts (
                    account_id text PRIMARY KEY,
                    version bigint NOT NULL CHECK (version > 0),
                    details jsonb NOT NULL CHECK (jsonb_typeof(details) = 'object'),
                    created_at timestamptz NOT NULL DEFAULT now(),
                    updated_at timestamptz NOT NULL DEFAULT now()
                )
                """
        ),
        PostgresMigration(
            version: 2,
            name: "create the event outbox",
            statements: [
                """
                CREATE TABLE outbox (
                    position bigserial PRIMARY KEY,
                    event_id uuid NOT NULL UNIQUE,
                    account_id text NOT NULL,
                    type text NOT NULL,
                    event jsonb NOT NULL,
                    occurred_at timestamptz NOT NULL
                )
                """,
            ] + PostgresOutbox.notifyTriggerStatements(schema: "profile")
        ),
    ]
}

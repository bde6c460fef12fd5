import KontoPostgres

/// The Profile service's schema, applied at start by ``PostgresProfileStorage/migrate(logger:)``.
public enum ProfileMigrations {
    public static let all: [PostgresMigration] = [
        PostgresMigration(
            version: 1,
            name: "create profile_accounts",
            sql: """
                CREATE TABLE profile_accounts (
                    account_id text PRIMARY KEY,
                    version bigint NOT NULL CHECK (version > 0),
                    details jsonb NOT NULL CHECK (jsonb_typeof(details) = 'object'),
                    created_at timestamptz NOT NULL DEFAULT now(),
                    updated_at timestamptz NOT NULL DEFAULT now()
                )
                """
        ),
    ]
}

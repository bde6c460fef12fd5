import KontoPostgres

/// Identity's schema, in the `identity` PostgreSQL schema (its migration namespace), so Identity can share a database
/// with the other services. Applied at start by ``PostgresIdentityStorage/migrate(logger:)``.
public enum IdentityMigrations {
    public static let namespace = "identity"

    public static let all: [PostgresMigration] = [
        PostgresMigration(
            version: 1,
            name: "create credentials, sessions, failures, reset tokens, clean-ups and outbox",
            statements: [
                """
                CREATE TABLE credentials (
                    account_id text PRIMARY KEY,
                    user_id text,
                    normalized_user_id text UNIQUE,
                    password_hash text,
                    pending boolean NOT NULL DEFAULT false,
                    created_at timestamptz NOT NULL,
                    CHECK ((user_id IS NULL) = (normalized_user_id IS NULL))
                )
                """,
                """
                CREATE INDEX credentials_pending ON credentials (created_at) WHERE pending
                """,
                """
                CREATE TABLE sessions (
                    id text PRIMARY KEY,
                    account_id text NOT NULL REFERENCES credentials (account_id) ON DELETE CASCADE,
                    token_hash bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
                    created_at timestamptz NOT NULL,
                    idle_expires_at timestamptz NOT NULL,
                    absolute_expires_at timestamptz NOT NULL,
                    privileged_until timestamptz
                )
                """,
                """
                CREATE INDEX sessions_account ON sessions (account_id)
                """,
                """
                CREATE TABLE login_failures (
                    key text PRIMARY KEY,
                    count integer NOT NULL CHECK (count > 0),
                    last_failure_at timestamptz NOT NULL
                )
                """,
                """
                CREATE INDEX login_failures_age ON login_failures (last_failure_at)
                """,
                """
                CREATE TABLE reset_tokens (
                    token_hash bytea PRIMARY KEY CHECK (length(token_hash) = 32),
                    account_id text NOT NULL REFERENCES credentials (account_id) ON DELETE CASCADE,
                    expires_at timestamptz NOT NULL
                )
                """,
                """
                CREATE INDEX reset_tokens_account ON reset_tokens (account_id)
                """,
                """
                CREATE TABLE profile_cleanups (
                    account_id text PRIMARY KEY,
                    not_before timestamptz NOT NULL
                )
                """,
                """
                CREATE INDEX profile_cleanups_due ON profile_cleanups (not_before)
                """,
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
            ]
        ),
        PostgresMigration(
            version: 2,
            name: "notify the outbox relay of new events",
            statements: [
                // One notification per inserting statement: the relay (LISTEN identity_outbox) wakes at once, in any replica.
                """
                CREATE FUNCTION notify_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    PERFORM pg_notify('identity_outbox', '');
                    RETURN NULL;
                END
                $$
                """,
                """
                CREATE TRIGGER outbox_notify AFTER INSERT ON outbox FOR EACH STATEMENT EXECUTE FUNCTION notify_outbox()
                """,
            ]
        ),
        PostgresMigration(
            version: 3,
            name: "credential versions: a session is valid only under the credential it was created with",
            statements: [
                """
                ALTER TABLE credentials ADD COLUMN credential_version bigint NOT NULL DEFAULT 1
                """,
                """
                ALTER TABLE sessions ADD COLUMN credential_version bigint NOT NULL DEFAULT 1
                """,
            ]
        ),
        PostgresMigration(
            version: 4,
            name: "known clients: addresses and devices that signed in to an account",
            statements: [
                """
                CREATE TABLE known_clients (
                    account_id text NOT NULL REFERENCES credentials (account_id) ON DELETE CASCADE,
                    client_hash bytea NOT NULL CHECK (length(client_hash) = 32),
                    last_success_at timestamptz NOT NULL,
                    PRIMARY KEY (account_id, client_hash)
                )
                """,
                """
                CREATE INDEX known_clients_age ON known_clients (last_success_at)
                """,
            ]
        ),
        PostgresMigration(
            version: 5,
            name: "second factors: TOTP, recovery codes, login challenges, sessions' assurance level",
            statements: [
                """
                ALTER TABLE sessions ADD COLUMN assurance_level smallint NOT NULL DEFAULT 1 CHECK (assurance_level IN (1, 2))
                """,
                """
                CREATE TABLE factors (
                    id text PRIMARY KEY,
                    account_id text NOT NULL REFERENCES credentials (account_id) ON DELETE CASCADE,
                    kind text NOT NULL CHECK (kind IN ('totp', 'recoveryCodes')),
                    name text NOT NULL,
                    sealed_secret bytea,
                    confirmed boolean NOT NULL,
                    created_at timestamptz NOT NULL,
                    last_used_at timestamptz,
                    last_used_step bigint
                )
                """,
                """
                CREATE INDEX factors_account ON factors (account_id)
                """,
                """
                CREATE TABLE recovery_codes (
                    factor_id text NOT NULL REFERENCES factors (id) ON DELETE CASCADE,
                    code_hash bytea NOT NULL CHECK (length(code_hash) = 32),
                    used_at timestamptz,
                    PRIMARY KEY (factor_id, code_hash)
                )
                """,
                """
                CREATE TABLE login_challenges (
                    token_hash bytea PRIMARY KEY CHECK (length(token_hash) = 32),
                    account_id text NOT NULL REFERENCES credentials (account_id) ON DELETE CASCADE,
                    credential_version bigint NOT NULL,
                    expires_at timestamptz NOT NULL
                )
                """,
                """
                CREATE INDEX login_challenges_expiry ON login_challenges (expires_at)
                """,
            ]
        ),
        PostgresMigration(
            version: 6,
            name: "passkeys: credential IDs and counters of factors, used passkey challenges",
            statements: [
                """
                ALTER TABLE factors DROP CONSTRAINT factors_kind_check
                """,
                """
                ALTER TABLE factors ADD CONSTRAINT factors_kind_check CHECK (kind IN ('totp', 'recoveryCodes', 'passkey'))
                """,
                """
                ALTER TABLE factors ADD COLUMN credential_id bytea CHECK (length(credential_id) BETWEEN 1 AND 1023)
                """,
                """
                ALTER TABLE factors ADD COLUMN sign_count bigint
                """,
                """
                CREATE UNIQUE INDEX factors_credential_id ON factors (credential_id) WHERE credential_id IS NOT NULL
                """,
                """
                CREATE TABLE used_passkey_challenges (
                    challenge_hash bytea PRIMARY KEY CHECK (length(challenge_hash) = 32),
                    expires_at timestamptz NOT NULL
                )
                """,
                """
                CREATE INDEX used_passkey_challenges_expiry ON used_passkey_challenges (expires_at)
                """,
            ]
        ),
        PostgresMigration(
            version: 7,
            name: "email verification: when the userId was verified, verification tokens",
            statements: [
                """
                ALTER TABLE credentials ADD COLUMN email_verified_at timestamptz
                """,
                """
                CREATE TABLE email_verifications (
                    token_hash bytea PRIMARY KEY CHECK (length(token_hash) = 32),
                    account_id text NOT NULL REFERENCES credentials (account_id) ON DELETE CASCADE,
                    address text NOT NULL,
                    expires_at timestamptz NOT NULL
                )
                """,
                """
                CREATE INDEX email_verifications_account ON email_verifications (account_id)
                """,
                """
                CREATE INDEX email_verifications_expiry ON email_verifications (expires_at)
                """,
            ]
        ),
        PostgresMigration(
            version: 8,
            name: "sign-in codes by mail",
            statements: [
                // The digest is an HMAC bound to the account (8 digits alone would be a small space to search).
                """
                CREATE TABLE email_codes (
                    code_digest bytea PRIMARY KEY CHECK (length(code_digest) = 32),
                    account_id text NOT NULL REFERENCES credentials (account_id) ON DELETE CASCADE,
                    credential_version bigint NOT NULL,
                    expires_at timestamptz NOT NULL
                )
                """,
                """
                CREATE INDEX email_codes_account ON email_codes (account_id)
                """,
                """
                CREATE INDEX email_codes_expiry ON email_codes (expires_at)
                """,
            ]
        ),
        PostgresMigration(
            version: 9,
            name: "email verification of the contact address where userIds are usernames",
            statements: [
                """
                ALTER TABLE credentials ADD COLUMN verified_email text
                """,
                """
                ALTER TABLE email_verifications ADD COLUMN is_user_id boolean NOT NULL DEFAULT true
                """,
            ]
        ),
        PostgresMigration(
            version: 10,
            name: "external identities, used ID token nonces, provider token revocations",
            statements: [
                """
                CREATE TABLE external_identities (
                    id text PRIMARY KEY,
                    account_id text NOT NULL REFERENCES credentials (account_id) ON DELETE CASCADE,
                    provider text NOT NULL,
                    subject text NOT NULL,
                    email text,
                    email_verified boolean NOT NULL,
                    created_at timestamptz NOT NULL,
                    last_used_at timestamptz,
                    sealed_refresh_token bytea,
                    UNIQUE (provider, subject)
                )
                """,
                """
                CREATE INDEX external_identities_account ON external_identities (account_id)
                """,
                """
                CREATE TABLE used_nonces (
                    digest bytea PRIMARY KEY CHECK (length(digest) = 32),
                    expires_at timestamptz NOT NULL
                )
                """,
                """
                CREATE INDEX used_nonces_expiry ON used_nonces (expires_at)
                """,
                // No reference to the account: it is deleted as the revocation is written.
                """
                CREATE TABLE provider_revocations (
                    id text PRIMARY KEY,
                    provider text NOT NULL,
                    account_id text NOT NULL,
                    identity_id text NOT NULL,
                    sealed_token bytea NOT NULL,
                    attempts integer NOT NULL,
                    next_attempt_at timestamptz NOT NULL,
                    dead boolean NOT NULL DEFAULT false
                )
                """,
                """
                CREATE INDEX provider_revocations_due ON provider_revocations (next_attempt_at) WHERE NOT dead
                """,
            ]
        ),
        // When the account's address was first proven (docs/IDENTITY.md, "Pre-hijacked accounts"): the first proof
        // ends what the account gained before it. Accounts verified before this migration count as proven then.
        PostgresMigration(
            version: 11,
            name: "credentials remember their first proof of address",
            statements: [
                "ALTER TABLE credentials ADD COLUMN proven_at timestamptz",
                "UPDATE credentials SET proven_at = email_verified_at WHERE email_verified_at IS NOT NULL",
            ]
        ),
        // The second factor's hard stop (docs/IDENTITY.md, "Second factor"): answers a login challenge has taken, and
        // each account's consecutive second-factor answers not shown right (counted before they are checked).
        PostgresMigration(
            version: 12,
            name: "login challenges allow a few answers; a second factor locks after consecutive wrong ones",
            statements: [
                "ALTER TABLE login_challenges ADD COLUMN answers integer NOT NULL DEFAULT 0",
                """
                CREATE TABLE second_factor_answers (
                    account_id text PRIMARY KEY REFERENCES credentials (account_id) ON DELETE CASCADE,
                    count integer NOT NULL
                )
                """,
            ]
        ),
        // Operator keys (docs/ADMIN.md): the secret's SHA-256 only, found by the key's id.
        PostgresMigration(
            version: 13,
            name: "operator keys",
            statements: [
                """
                CREATE TABLE operator_keys (
                    id text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{32}$'),
                    name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
                    scopes text[] NOT NULL,
                    secret_hash bytea NOT NULL CHECK (length(secret_hash) = 32),
                    created_at timestamptz NOT NULL,
                    created_by text,
                    expires_at timestamptz,
                    last_used_at timestamptz,
                    revoked_at timestamptz
                )
                """,
            ]
        ),
        // The operators' account search: userIds by case-insensitive substring (pg_trgm's trigram index, which serves
        // LIKE '%…%' and prefixes alike) and the listing's order, newest first. pg_trgm is a trusted extension: the
        // database's owner may create it. Where it exists already (in another schema), its operator class is named there.
        PostgresMigration(
            version: 14,
            name: "account search indexes",
            statements: [
                """
                DO $$
                DECLARE trgm_schema text;
                BEGIN
                    SELECT n.nspname INTO trgm_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
                    IF trgm_schema IS NULL THEN
                        CREATE EXTENSION pg_trgm;
                        SELECT n.nspname INTO trgm_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
                    END IF;
                    EXECUTE format('CREATE INDEX credentials_user_id_trgm ON credentials USING gin (lower(user_id) %I.gin_trgm_ops)', trgm_schema);
                END
                $$
                """,
                "CREATE INDEX credentials_listing ON credentials (created_at DESC, account_id DESC) WHERE NOT pending",
            ]
        ),
        // An operator's disabling (docs/ADMIN.md): no sign-in succeeds while it is set.
        PostgresMigration(
            version: 15,
            name: "accounts can be disabled",
            statements: ["ALTER TABLE credentials ADD COLUMN disabled_at timestamptz"]
        ),
        // The audit log (docs/ADMIN.md): appended in each change's transaction, sealed into a hash chain afterwards in
        // the order entries are found committed (position, hash), one sealer at a time (the chain row's lock). No time
        // index: retention walks the chain from its anchor, listings go newest first by sequence.
        PostgresMigration(
            version: 16,
            name: "audit log with a hash chain",
            statements: [
                """
                CREATE TABLE audit_log (
                    sequence bigserial PRIMARY KEY,
                    entry_id uuid NOT NULL,
                    occurred_at timestamptz NOT NULL,
                    account_id text,
                    actor_type text NOT NULL,
                    actor_id text,
                    type text NOT NULL,
                    operation text,
                    facts text NOT NULL,
                    personal text,
                    personal_digest bytea NOT NULL,
                    position bigint UNIQUE,
                    hash bytea,
                    CHECK ((position IS NULL) = (hash IS NULL))
                )
                """,
                "CREATE INDEX audit_log_unsealed ON audit_log (sequence) WHERE position IS NULL",
                "CREATE INDEX audit_log_account ON audit_log (account_id, sequence)",
                "CREATE INDEX audit_log_actor ON audit_log (actor_id, sequence)",
                """
                CREATE TABLE audit_chain (
                    id integer PRIMARY KEY CHECK (id = 1),
                    anchor_position bigint NOT NULL,
                    anchor_hash bytea NOT NULL,
                    head_position bigint NOT NULL,
                    head_hash bytea NOT NULL
                )
                """,
                "INSERT INTO audit_chain VALUES (1, 0, decode(repeat('00', 32), 'hex'), 0, decode(repeat('00', 32), 'hex'))",
            ]
        ),
        // What the owner's list of sessions shows (docs/API.md, "Sessions and devices"): kept on the session's row, so
        // it goes with the session and with the account. Bounded here as Identity bounds it.
        PostgresMigration(
            version: 17,
            name: "sessions remember their client and sign-in method",
            statements: [
                """
                ALTER TABLE sessions
                    ADD COLUMN last_used_at timestamptz,
                    ADD COLUMN sign_in_method text CHECK (char_length(sign_in_method) <= 80),
                    ADD COLUMN client_address text CHECK (char_length(client_address) <= 64),
                    ADD COLUMN client_name text CHECK (char_length(client_name) <= 256)
                """,
            ]
        ),
        // The optional mails the owner turned off (docs/API.md, "Mail preferences"), on the credential's row: gone with
        // the account.
        PostgresMigration(
            version: 18,
            name: "mail the owner turned off",
            statements: [
                "ALTER TABLE credentials ADD COLUMN mail_opt_outs text[] NOT NULL DEFAULT '{}' CHECK (cardinality(mail_opt_outs) <= 8)",
            ]
        ),
        // Konto as an OpenID Provider (docs/OIDC.md): codes, grants with their refresh tokens, consents; hashes only. Each
        // goes with its account; codes and grants outlive the console session they came through (its id set to null:
        // a code needs it still there, RP-initiated logout finds grants by it). A used code is kept until keep_until, a
        // used refresh token until its expiry, so their second use is recognised. At most one refresh token of a grant
        // is unused: its current one.
        PostgresMigration(
            version: 19,
            name: "OpenID Provider codes, grants, refresh tokens and consents",
            statements: [
                """
                CREATE TABLE oidc_grants (
                    id text PRIMARY KEY,
                    account_id text NOT NULL REFERENCES credentials (account_id) ON DELETE CASCADE,
                    client_id text NOT NULL CHECK (char_length(client_id) BETWEEN 1 AND 200),
                    session_id text REFERENCES sessions (id) ON DELETE SET NULL,
                    scopes text[] NOT NULL CHECK (cardinality(scopes) <= 16),
                    auth_time timestamptz NOT NULL,
                    assurance_level smallint NOT NULL CHECK (assurance_level IN (1, 2)),
                    sign_in_method text CHECK (char_length(sign_in_method) <= 80),
                    credential_version bigint NOT NULL,
                    created_at timestamptz NOT NULL,
                    idle_expires_at timestamptz NOT NULL,
                    absolute_expires_at timestamptz NOT NULL,
                    last_refreshed_at timestamptz
                )
                """,
                "CREATE INDEX oidc_grants_account ON oidc_grants (account_id, client_id)",
                "CREATE INDEX oidc_grants_session ON oidc_grants (session_id) WHERE session_id IS NOT NULL",
                "CREATE INDEX oidc_grants_idle ON oidc_grants (idle_expires_at)",
                "CREATE INDEX oidc_grants_absolute ON oidc_grants (absolute_expires_at)",
                """
                CREATE TABLE oidc_refresh_tokens (
                    token_hash bytea PRIMARY KEY CHECK (length(token_hash) = 32),
                    grant_id text NOT NULL REFERENCES oidc_grants (id) ON DELETE CASCADE,
                    expires_at timestamptz NOT NULL,
                    used_at timestamptz
                )
                """,
                "CREATE UNIQUE INDEX oidc_refresh_tokens_current ON oidc_refresh_tokens (grant_id) WHERE used_at IS NULL",
                "CREATE INDEX oidc_refresh_tokens_grant ON oidc_refresh_tokens (grant_id)",
                "CREATE INDEX oidc_refresh_tokens_age ON oidc_refresh_tokens (expires_at)",
                """
                CREATE TABLE oidc_codes (
                    code_hash bytea PRIMARY KEY CHECK (length(code_hash) = 32),
                    account_id text NOT NULL REFERENCES credentials (account_id) ON DELETE CASCADE,
                    session_id text REFERENCES sessions (id) ON DELETE SET NULL,
                    client_id text NOT NULL CHECK (char_length(client_id) BETWEEN 1 AND 200),
                    redirect_uri text NOT NULL CHECK (char_length(redirect_uri) BETWEEN 1 AND 2000),
                    code_challenge text NOT NULL CHECK (char_length(code_challenge) = 43),
                    scopes text[] NOT NULL CHECK (cardinality(scopes) <= 16),
                    nonce text CHECK (char_length(nonce) <= 512),
                    auth_time timestamptz NOT NULL,
                    assurance_level smallint NOT NULL CHECK (assurance_level IN (1, 2)),
                    sign_in_method text CHECK (char_length(sign_in_method) <= 80),
                    credential_version bigint NOT NULL,
                    issued_at timestamptz NOT NULL,
                    expires_at timestamptz NOT NULL,
                    keep_until timestamptz NOT NULL,
                    used_at timestamptz,
                    grant_id text REFERENCES oidc_grants (id) ON DELETE SET NULL
                )
                """,
                "CREATE INDEX oidc_codes_account ON oidc_codes (account_id)",
                "CREATE INDEX oidc_codes_session ON oidc_codes (session_id) WHERE session_id IS NOT NULL",
                "CREATE INDEX oidc_codes_grant ON oidc_codes (grant_id) WHERE grant_id IS NOT NULL",
                "CREATE INDEX oidc_codes_age ON oidc_codes (keep_until)",
                """
                CREATE TABLE oidc_consents (
                    account_id text NOT NULL REFERENCES credentials (account_id) ON DELETE CASCADE,
                    client_id text NOT NULL CHECK (char_length(client_id) BETWEEN 1 AND 200),
                    scopes text[] NOT NULL CHECK (cardinality(scopes) <= 16),
                    granted_at timestamptz NOT NULL,
                    PRIMARY KEY (account_id, client_id)
                )
                """,
            ]
        ),
        // OpenID Provider clients registered through the admin API (the clients file's are not stored). Their settings
        // as the API gave them (no personal data), their secret as SHA-256 only, and during a rotation's overlap the
        // previous secret's digest until it lapses. Codes, grants and consents name clients by id without a foreign
        // key (the file's clients have no row); removing a client removes them (PostgresIdentityStorage).
        PostgresMigration(
            version: 20,
            name: "OpenID Provider clients registered through the admin API",
            statements: [
                """
                CREATE TABLE oidc_clients (
                    id text PRIMARY KEY CHECK (char_length(id) BETWEEN 1 AND 128),
                    settings jsonb NOT NULL CHECK (octet_length(settings::text) <= 65536),
                    secret_digest bytea CHECK (length(secret_digest) = 32),
                    secret_created_at timestamptz,
                    previous_secret_digest bytea CHECK (length(previous_secret_digest) = 32),
                    previous_secret_expires_at timestamptz,
                    created_at timestamptz NOT NULL,
                    updated_at timestamptz NOT NULL
                )
                """,
                "CREATE INDEX oidc_grants_client ON oidc_grants (client_id)",
                "CREATE INDEX oidc_consents_client ON oidc_consents (client_id)",
            ]
        ),
        // When the last entry retention removed was written: verification reports a chain that starts after an entry
        // younger than the retention (removed before its time).
        PostgresMigration(
            version: 21,
            name: "the audit chain's anchor time",
            statements: ["ALTER TABLE audit_chain ADD COLUMN anchor_occurred_at timestamptz"]
        ),
        // The code a verification mail carries beside its link (the app's way to confirm with its session): an HMAC
        // bound to the account, as a sign-in code's.
        PostgresMigration(
            version: 22,
            name: "verification codes",
            statements: ["ALTER TABLE email_verifications ADD COLUMN code_digest bytea CHECK (code_digest IS NULL OR length(code_digest) = 32)"]
        ),
    ]
}

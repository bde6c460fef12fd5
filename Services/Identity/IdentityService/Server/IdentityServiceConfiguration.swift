import Foundation
import KontoContracts
import KontoModel
import KontoPostgres
import KontoRuntime
import KontoWebAuthn
import KontoWire
import Logging
import NIOCore

/// Everything `konto-identity` needs, with a default for every setting but its keys.
public struct IdentityServiceConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// What Identity calls Profile and Notifications with: its own wire key (the root in development).
    public var secret: WireSecret
    /// Whom Identity accepts: the gateway's verifier (derived from `secret` unless set).
    public var verifiers: WireVerifiers
    /// Seals Identity's data at rest (TOTP secrets, provider tokens, sign-up tokens, code MACs):
    /// `KONTO_IDENTITY_DATA_KEY`, held by Identity alone.
    public var dataKey: WireSecret
    /// Seals a mail's secret (a reset token) for the courier: `KONTO_MAIL_SEAL_KEY`, shared with Notifications only.
    public var mailSealKey: WireSecret
    /// TLS on the wire (`KONTO_WIRE_TLS_CERT`, `_KEY`, `_CA`); nil: plain TCP.
    public var wireTLS: WireTLS?
    /// Who may call which method: always the allow-list beside the contracts in a running service (the
    /// executable and the stack never change it). In-process tests of the service's own behaviour, which call every
    /// method from one client, may open it; the allow-list itself is tested on the service as configured here.
    public var authorization: WireAuthorization = WireAllowList.identity
    /// PostgreSQL; `nil` keeps credentials and sessions in memory (dev stack, tests): they are lost at exit.
    public var database: PostgresSettings?
    /// How long one database operation may take before it is `identity.storageUnavailable` (a database that is down
    /// is noticed no sooner). Tests that stop their database on purpose shorten it.
    public var storageTimeout: Duration = .seconds(5)
    /// Where the Profile service listens (same shared secret).
    public var profileHost: String
    public var profilePort: Int
    /// Deadline of each Profile call.
    public var profileTimeout: Duration
    /// Where Notifications listens, for the outbox relay; nil runs no relay (events stay in the outbox).
    public var notificationsHost: String?
    public var notificationsPort: Int
    public var accounts: AccountConfiguration
    public var hashing: PasswordHashingPool.Configuration
    public var options: IdentityOptions
    /// External identity providers (`KONTO_IDENTITY_PROVIDERS`); none by default.
    public var providers: IdentityProviders = .none
    /// How the providers are reached: over HTTP unless a test serves them in its process.
    public var providerFetcher: (any ProviderFetcher)?
    /// Where `GET /metrics` is served (`KONTO_IDENTITY_METRICS_HOST`, `_PORT`); nil: not served.
    public var metricsHost = "127.0.0.1"
    public var metricsPort: Int?

    public init(
        host: String = "127.0.0.1",
        port: Int = IdentityContract.defaultPort,
        secret: WireSecret,
        database: PostgresSettings? = nil,
        profileHost: String = "127.0.0.1",
        profilePort: Int = ProfileContract.defaultPort,
        profileTimeout: Duration = .seconds(5),
        notificationsHost: String? = nil,
        notificationsPort: Int = NotificationsContract.defaultPort,
        accounts: AccountConfiguration = .default,
        hashing: PasswordHashingPool.Configuration = PasswordHashingPool.Configuration(),
        options: IdentityOptions = IdentityOptions()
    ) {
        self.host = host
        self.port = port
        self.secret = secret
        self.verifiers = WireVerifiers(secret)
        self.dataKey = secret
        self.mailSealKey = secret
        self.database = database
        self.profileHost = profileHost
        self.profilePort = profilePort
        self.profileTimeout = profileTimeout
        self.notificationsHost = notificationsHost
        self.notificationsPort = notificationsPort
        self.accounts = accounts
        self.hashing = hashing
        self.options = options
    }

    /// Reads the variables docs/CONFIGURATION.md lists; every problem names its variable or file.
    public init(environment: ServiceEnvironment, logger: Logger) throws {
        let database = try environment.database(url: "KONTO_IDENTITY_DATABASE_URL", connections: "KONTO_IDENTITY_DATABASE_CONNECTIONS")
        let accounts = try environment.string("KONTO_ACCOUNTS_CONFIG").map { path in
            try AccountConfigurationLoader(logger: logger).load(path: path)
        } ?? .default
        let owasp = Argon2Parameters.owaspMinimum
        let parameters = Argon2Parameters(
            memoryKiB: UInt32(try environment.integer("KONTO_IDENTITY_ARGON2_MEMORY_KIB", default: Int(owasp.memoryKiB), in: Int(owasp.memoryKiB)...(4 << 20))),
            iterations: UInt32(try environment.integer("KONTO_IDENTITY_ARGON2_ITERATIONS", default: Int(owasp.iterations), in: Int(owasp.iterations)...64)),
            parallelism: UInt32(try environment.integer("KONTO_IDENTITY_ARGON2_PARALLELISM", default: Int(owasp.parallelism), in: 1...64))
        )
        let defaults = PasswordHashingPool.Configuration()
        let hashing = PasswordHashingPool.Configuration(
            parameters: parameters,
            threads: try environment.integer("KONTO_IDENTITY_HASH_THREADS", default: defaults.threads, in: 1...256),
            maxQueued: try environment.integer("KONTO_IDENTITY_HASH_QUEUE", default: defaults.maxQueued, in: 0...100_000)
        )
        var options = IdentityOptions()
        options.sessionIdleTimeout = try environment.seconds("KONTO_IDENTITY_SESSION_IDLE_SECONDS", default: options.sessionIdleTimeout, in: 60...(366 * 86_400))
        options.sessionLifetime = try environment.seconds("KONTO_IDENTITY_SESSION_LIFETIME_SECONDS", default: options.sessionLifetime, in: 60...(3_660 * 86_400))
        options.privilegedWindow = try environment.seconds("KONTO_IDENTITY_PRIVILEGED_SECONDS", default: options.privilegedWindow, in: 0...86_400)
        options.resetTokenLifetime = try environment.seconds("KONTO_IDENTITY_RESET_TOKEN_SECONDS", default: options.resetTokenLifetime, in: 60...(7 * 86_400))
        if let path = environment.string("KONTO_IDENTITY_COMMON_PASSWORDS") {
            // An operator's bigger list, added to the built-in one; a file that cannot be read stops the start.
            guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
                throw ServiceEnvironmentError(variable: "KONTO_IDENTITY_COMMON_PASSWORDS", problem: "cannot read \(path) as UTF-8 text")
            }
            options.commonPasswords = CommonPasswords(adding: text)
        }
        let threshold = try environment.integer("KONTO_IDENTITY_THROTTLE_FAILURES", default: options.throttle.threshold, in: 1...1_000)
        let baseDelay = try environment.seconds("KONTO_IDENTITY_THROTTLE_BASE_SECONDS", default: options.throttle.baseDelay, in: 1...3_600)
        let maximumDelay = try environment.seconds("KONTO_IDENTITY_THROTTLE_MAX_SECONDS", default: options.throttle.maximumDelay, in: 1...86_400)
        options.throttle = ThrottlePolicy(threshold: threshold, baseDelay: baseDelay, maximumDelay: maximumDelay, window: options.throttle.window)
        let profileTimeout = try environment.milliseconds("KONTO_IDENTITY_PROFILE_TIMEOUT_MS", default: .seconds(5), in: 10...600_000)
        // A late create must be deleted after it could still commit.
        let cleanupDelay = try environment.seconds("KONTO_IDENTITY_PROFILE_CLEANUP_SECONDS", default: options.profileCleanupDelay, in: 1...86_400)
        options.profileCleanupDelay = max(cleanupDelay, profileTimeout + .seconds(5))
        // A live sign-up must not be taken for a dead one: older than any Profile call could make it.
        let staleAge = try environment.seconds("KONTO_IDENTITY_STALE_RESERVATION_SECONDS", default: options.staleReservationAge, in: 1...86_400)
        options.staleReservationAge = max(staleAge, profileTimeout + .seconds(5))
        options.pruneInterval = try environment.seconds("KONTO_IDENTITY_PRUNE_SECONDS", default: options.pruneInterval, in: 1...86_400)
        options.emailCodeLogin = try environment.flag("KONTO_IDENTITY_EMAIL_CODE_LOGIN", default: options.emailCodeLogin)
        options.newClientMail = try environment.flag("KONTO_IDENTITY_NEW_CLIENT_MAIL", default: options.newClientMail)
        let issuer = environment.string("KONTO_IDENTITY_TOTP_ISSUER", default: options.totpIssuer)
        // The otpauth URI's label is "ISSUER:account": a colon would split it where the app does not expect.
        guard (1...64).contains(issuer.count), !issuer.contains(":") else {
            throw ServiceEnvironmentError(variable: "KONTO_IDENTITY_TOTP_ISSUER", problem: "must be 1 to 64 characters without a colon")
        }
        options.totpIssuer = issuer
        options.relyingParty = try environment.webAuthnRelyingParty()
        options.secondFactorLockAfter = try environment.integer("KONTO_IDENTITY_SECOND_FACTOR_LOCK_AFTER", default: 10, in: 3...100)
        options.secondFactorWarnAfter = min(3, options.secondFactorLockAfter - 1)
        options.deadRevocationRetention = .seconds(86_400 * (try environment.integer("KONTO_IDENTITY_DEAD_REVOCATION_DAYS", default: 30, in: 1...3_650)))
        options.providerKeyRefreshCooldown = try environment.seconds("KONTO_IDENTITY_PROVIDER_KEY_COOLDOWN_SECONDS", default: options.providerKeyRefreshCooldown, in: 0...86_400)
        let auditDays = try environment.integer("KONTO_AUDIT_RETENTION_DAYS", default: 365, in: 0...36_500)
        options.auditRetention = auditDays == 0 ? nil : .seconds(86_400 * auditDays)
        if let bootstrap = environment.string("KONTO_IDENTITY_BOOTSTRAP_OPERATOR_KEY") {
            guard let key = OperatorKeyText(parsing: bootstrap) else {
                throw ServiceEnvironmentError(variable: "KONTO_IDENTITY_BOOTSTRAP_OPERATOR_KEY", problem: "is not an operator key (make one with `konto admin keys generate`)")
            }
            options.bootstrapOperatorKey = key
        }
        options.openID = try environment.openIDProvider()
        let keys = try environment.wireKeys(service: IdentityContract.serviceName, calls: true, serves: true)
        let providers: IdentityProviders
        if let path = environment.string("KONTO_IDENTITY_PROVIDERS") {
            do {
                providers = try IdentityProvidersLoader().load(path: path)
            } catch {
                throw ServiceEnvironmentError(variable: "KONTO_IDENTITY_PROVIDERS", problem: "\n" + error.description)
            }
        } else {
            providers = .none
        }
        self.init(
            host: environment.string("KONTO_IDENTITY_HOST", default: "127.0.0.1"),
            port: try environment.port("KONTO_IDENTITY_PORT", default: IdentityContract.defaultPort),
            secret: keys.callerKey,
            database: database,
            profileHost: environment.string("KONTO_PROFILE_HOST", default: "127.0.0.1"),
            profilePort: try environment.port("KONTO_PROFILE_PORT", default: ProfileContract.defaultPort),
            profileTimeout: profileTimeout,
            notificationsHost: try environment.flag("KONTO_IDENTITY_RELAY", default: true) ? environment.string("KONTO_NOTIFICATIONS_HOST", default: "127.0.0.1") : nil,
            notificationsPort: try environment.port("KONTO_NOTIFICATIONS_PORT", default: NotificationsContract.defaultPort),
            accounts: accounts,
            hashing: hashing,
            options: options
        )
        self.providers = providers
        self.verifiers = keys.verifiers
        metricsHost = environment.string("KONTO_IDENTITY_METRICS_HOST", default: metricsHost)
        if environment.string("KONTO_IDENTITY_METRICS_PORT") != nil {
            metricsPort = try environment.port("KONTO_IDENTITY_METRICS_PORT", default: 0)
        }
        self.dataKey = try environment.dataKey("KONTO_IDENTITY_DATA_KEY", keys: keys)
        self.mailSealKey = try environment.dataKey("KONTO_MAIL_SEAL_KEY", keys: keys)
        do {
            self.wireTLS = try WireTLS.fromEnvironment { environment.string($0) }
        } catch {
            throw ServiceEnvironmentError(variable: error.variable, problem: error.problem)
        }
    }
}

extension ServiceEnvironment {
    /// Konto as an OpenID Provider: `KONTO_IDENTITY_OIDC_ISSUER` turns it on and then needs `KONTO_IDENTITY_OIDC_KEYS`
    /// (PEM files, comma-separated, the first signing); `KONTO_IDENTITY_OIDC_CLIENTS` names the clients file.
    func openIDProvider() throws(ServiceEnvironmentError) -> OpenIDProviderSettings? {
        guard let issuer = string("KONTO_IDENTITY_OIDC_ISSUER") else {
            for name in Self.openIDVariables where string(name) != nil {
                throw ServiceEnvironmentError(variable: name, problem: "is set without KONTO_IDENTITY_OIDC_ISSUER, which turns the OpenID Provider on")
            }
            return nil
        }
        let paths = (string("KONTO_IDENTITY_OIDC_KEYS") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !paths.isEmpty else {
            throw ServiceEnvironmentError(variable: "KONTO_IDENTITY_OIDC_KEYS", problem: "missing: the PEM files of the keys that sign Konto's tokens (the first signs)")
        }
        let keys: OpenIDSigningKeys
        do {
            keys = try OpenIDSigningKeys.load(paths: paths)
        } catch {
            throw ServiceEnvironmentError(variable: "KONTO_IDENTITY_OIDC_KEYS", problem: error.description)
        }
        var clients = OpenIDClients.none
        if let path = string("KONTO_IDENTITY_OIDC_CLIENTS") {
            do {
                clients = try OpenIDClientsLoader().load(path: path)
            } catch {
                throw ServiceEnvironmentError(variable: "KONTO_IDENTITY_OIDC_CLIENTS", problem: "\n" + error.description)
            }
        }
        var settings: OpenIDProviderSettings
        do {
            settings = try OpenIDProviderSettings(issuer: issuer, keys: keys, clients: clients)
        } catch {
            throw ServiceEnvironmentError(variable: error.description.hasPrefix("client") ? "KONTO_IDENTITY_OIDC_CLIENTS" : "KONTO_IDENTITY_OIDC_ISSUER", problem: error.description)
        }
        // Access tokens stay short (a resource server checking them offline learns of a revocation only at their end);
        // a grant's absolute lifetime is at least its idle one.
        settings.accessTokenLifetime = try seconds("KONTO_IDENTITY_OIDC_ACCESS_TOKEN_SECONDS", default: settings.accessTokenLifetime, in: 60...3_600)
        let day = 24 * 3_600
        let idleDays = try integer("KONTO_IDENTITY_OIDC_REFRESH_IDLE_DAYS", default: Int(settings.refreshIdleLifetime.components.seconds) / day, in: 1...365)
        let absoluteDays = try integer("KONTO_IDENTITY_OIDC_REFRESH_ABSOLUTE_DAYS", default: max(idleDays, Int(settings.refreshAbsoluteLifetime.components.seconds) / day), in: 1...3_650)
        guard absoluteDays >= idleDays else {
            throw ServiceEnvironmentError(
                variable: "KONTO_IDENTITY_OIDC_REFRESH_ABSOLUTE_DAYS", problem: "must be at least KONTO_IDENTITY_OIDC_REFRESH_IDLE_DAYS (\(idleDays)), got \(absoluteDays)"
            )
        }
        settings.refreshIdleLifetime = .seconds(idleDays * day)
        settings.refreshAbsoluteLifetime = .seconds(absoluteDays * day)
        settings.maxStoredClients = try integer("KONTO_IDENTITY_OIDC_CLIENTS_MAX", default: settings.maxStoredClients, in: 0...10_000)
        return settings
    }

    /// What only an OpenID Provider reads: each refused without `KONTO_IDENTITY_OIDC_ISSUER`.
    static let openIDVariables = [
        "KONTO_IDENTITY_OIDC_KEYS", "KONTO_IDENTITY_OIDC_CLIENTS", "KONTO_IDENTITY_OIDC_ACCESS_TOKEN_SECONDS", "KONTO_IDENTITY_OIDC_REFRESH_IDLE_DAYS",
        "KONTO_IDENTITY_OIDC_REFRESH_ABSOLUTE_DAYS", "KONTO_IDENTITY_OIDC_CLIENTS_MAX",
    ]

    /// A whole number of seconds in `range`.
    func seconds(_ name: String, default defaultValue: Duration, in range: ClosedRange<Int>) throws(ServiceEnvironmentError) -> Duration {
        .seconds(try integer(name, default: Int(defaultValue.components.seconds), in: range))
    }

    /// The passkeys' relying party: `KONTO_WEBAUTHN_RP_ID` (a domain, `localhost` by default), `KONTO_WEBAUTHN_RP_NAME`,
    /// `KONTO_WEBAUTHN_ORIGINS` (comma-separated `scheme://host[:port]`, each on the RP ID or a subdomain of it, HTTPS
    /// except on localhost; by default `https://RP_ID`, or `http://localhost:8080` for localhost).
    func webAuthnRelyingParty() throws(ServiceEnvironmentError) -> WebAuthnVerifier.RelyingParty {
        let id = string("KONTO_WEBAUTHN_RP_ID", default: "localhost").lowercased()
        let labels = id.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...253).contains(id.count), !labels.contains(where: \.isEmpty),
              id.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "." }),
              !labels.allSatisfy({ $0.allSatisfy(\.isNumber) })
        else {
            throw ServiceEnvironmentError(variable: "KONTO_WEBAUTHN_RP_ID", problem: "must be a domain name such as example.org (not an IP address)")
        }
        let name = string("KONTO_WEBAUTHN_RP_NAME", default: "Konto")
        guard (1...64).contains(name.count) else {
            throw ServiceEnvironmentError(variable: "KONTO_WEBAUTHN_RP_NAME", problem: "must be 1 to 64 characters")
        }
        let isLocal = { (host: String) in host == "localhost" || host.hasSuffix(".localhost") }
        let fallback = isLocal(id) ? "http://localhost:8080" : "https://\(id)"
        var origins: [String] = []
        for entry in string("KONTO_WEBAUTHN_ORIGINS", default: fallback).split(separator: ",") {
            let origin = entry.trimmingCharacters(in: .whitespaces)
            guard let url = URL(string: origin), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(),
                  scheme == "https" || (scheme == "http" && isLocal(host)),
                  url.path.isEmpty, url.query == nil, url.fragment == nil, url.user == nil,
                  host == id || host.hasSuffix("." + id)
            else {
                throw ServiceEnvironmentError(
                    variable: "KONTO_WEBAUTHN_ORIGINS",
                    problem: "\(origin.prefix(100)) is not an origin (scheme://host[:port]) on \(id) or a subdomain, with HTTPS except on localhost"
                )
            }
            origins.append(url.port.map { "\(scheme)://\(host):\($0)" } ?? "\(scheme)://\(host)")
        }
        guard !origins.isEmpty else {
            throw ServiceEnvironmentError(variable: "KONTO_WEBAUTHN_ORIGINS", problem: "must name at least one origin")
        }
        return WebAuthnVerifier.RelyingParty(id: id, name: name, origins: origins)
    }
}

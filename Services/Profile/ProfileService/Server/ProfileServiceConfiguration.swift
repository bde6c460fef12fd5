import KontoContracts
import KontoModel
import KontoPostgres
import KontoRuntime
import KontoWire
import Logging

/// Everything `konto-profile` needs, with a default for every setting but its keys.
public struct ProfileServiceConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// What Profile calls Notifications with: its own wire key (the root in development).
    public var secret: WireSecret
    /// Whom Profile accepts: the verifiers of the gateway, Identity and operators' services (derived from `secret`
    /// unless set).
    public var verifiers: WireVerifiers
    /// TLS on the wire (`KONTO_WIRE_TLS_CERT`, `_KEY`, `_CA`); nil: plain TCP.
    public var wireTLS: WireTLS?
    /// Who may call which method: always the allow-list beside the contracts in a running service (the
    /// executable and the stack never change it). In-process tests of the service's own behaviour, which call every
    /// method from one client, may open it; the allow-list itself is tested on the service as configured here.
    public var authorization: WireAuthorization = WireAllowList.profile
    /// PostgreSQL; `nil` keeps details in memory (dev stack, tests): they are lost at exit.
    public var database: PostgresSettings?
    public var accounts: AccountConfiguration
    public var store: ProfileStoreOptions
    /// Where Notifications listens, to consume `deletingAccount` (how a deleted account's details go); nil consumes
    /// nothing, and only Identity's repair, after its clean-up delay, removes them.
    public var notificationsHost: String?
    public var notificationsPort: Int
    /// How long a graceful shutdown waits for accepted requests before closing their connections.
    public var shutdownGracePeriod: Duration = .seconds(10)

    public init(
        host: String = "127.0.0.1",
        port: Int = ProfileContract.defaultPort,
        secret: WireSecret,
        database: PostgresSettings? = nil,
        accounts: AccountConfiguration = .default,
        store: ProfileStoreOptions = ProfileStoreOptions(),
        notificationsHost: String? = nil,
        notificationsPort: Int = NotificationsContract.defaultPort
    ) {
        self.host = host
        self.port = port
        self.secret = secret
        self.verifiers = WireVerifiers(secret)
        self.database = database
        self.accounts = accounts
        self.store = store
        self.notificationsHost = notificationsHost
        self.notificationsPort = notificationsPort
    }

    /// Reads the variables docs/CONFIGURATION.md lists; every problem names its variable or file.
    public init(environment: ServiceEnvironment, logger: Logger) throws {
        let defaults = ProfileStoreOptions()
        var limits = defaults.limits
        limits.maximumValueBytes = try environment.integer(
            "KONTO_PROFILE_MAX_VALUE_BYTES", default: limits.maximumValueBytes, in: 1...(16 << 20))
        limits.maximumAccountBytes = try environment.integer(
            "KONTO_PROFILE_MAX_ACCOUNT_BYTES", default: limits.maximumAccountBytes, in: 1...(256 << 20))
        let store = ProfileStoreOptions(
            limits: limits,
            operationTimeout: try environment.milliseconds("KONTO_PROFILE_DB_TIMEOUT_MS", default: defaults.operationTimeout, in: 10...600_000),
            maximumModifyAttempts: defaults.maximumModifyAttempts
        )
        let database = try environment.database(url: "KONTO_PROFILE_DATABASE_URL", connections: "KONTO_PROFILE_DATABASE_CONNECTIONS")
        let accounts = try environment.string("KONTO_ACCOUNTS_CONFIG").map { path in
            try AccountConfigurationLoader(logger: logger).load(path: path)
        } ?? .default
        let keys = try environment.wireKeys(service: ProfileContract.serviceName, calls: true, serves: true)
        self.init(
            host: environment.string("KONTO_PROFILE_HOST", default: "127.0.0.1"),
            port: try environment.port("KONTO_PROFILE_PORT", default: ProfileContract.defaultPort),
            secret: keys.callerKey,
            database: database,
            accounts: accounts,
            store: store,
            notificationsHost: try environment.flag("KONTO_PROFILE_EVENTS", default: true) ? environment.string("KONTO_NOTIFICATIONS_HOST", default: "127.0.0.1") : nil,
            notificationsPort: try environment.port("KONTO_NOTIFICATIONS_PORT", default: NotificationsContract.defaultPort)
        )
        self.verifiers = keys.verifiers
        self.shutdownGracePeriod = .seconds(try environment.integer("KONTO_PROFILE_SHUTDOWN_GRACE_SECONDS", default: 10, in: 1...3_600))
        do {
            self.wireTLS = try WireTLS.fromEnvironment { environment.string($0) }
        } catch {
            throw ServiceEnvironmentError(variable: error.variable, problem: error.problem)
        }
    }
}

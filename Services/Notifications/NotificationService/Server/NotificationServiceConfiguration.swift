import KontoContracts
import KontoPostgres
import KontoRuntime
import KontoWire
import Logging

/// Everything `konto-notifications` needs, with a default for every setting but its keys.
public struct NotificationServiceConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// The root in development, from which ``verifiers`` and ``mailSealKey`` are derived unless set (Notifications
    /// calls no one).
    public var secret: WireSecret
    /// Whom Notifications accepts: the verifiers of the gateway, Identity, Profile and operators' services.
    public var verifiers: WireVerifiers
    /// Opens a mail's secret sealed by Identity (`KONTO_MAIL_SEAL_KEY`, shared with Identity only).
    public var mailSealKey: WireSecret
    /// TLS on the wire (`KONTO_WIRE_TLS_CERT`, `_KEY`, `_CA`); nil: plain TCP.
    public var wireTLS: WireTLS?
    /// Who may call which method: always the allow-list beside the contracts in a running service (the
    /// executable and the stack never change it). In-process tests of the service's own behaviour, which call every
    /// method from one client, may open it; the allow-list itself is tested on the service as configured here.
    public var authorization: WireAuthorization = WireAllowList.notifications
    /// Event types are their publishers', groups their declarers' (always `.konto` in a running service; in-process
    /// tests that publish every type from one client may open it).
    public var ownership: EventOwnership = .konto
    /// PostgreSQL; `nil` keeps events in memory (dev stack, tests): they are lost at exit.
    public var database: PostgresSettings?
    public var options: NotificationOptions
    /// Endpoints that receive events as signed HTTP POSTs: the deployment's file's (the admin API adds others).
    public var webhooks: [WebhookEndpoint]
    /// Lets endpoints added through the admin API use http:// and local addresses (`KONTO_NOTIFICATIONS_WEBHOOKS_ALLOW_LOCAL`;
    /// development and tests).
    public var allowsLocalWebhooks = false
    /// How often the endpoints added through the admin API are read again (`KONTO_NOTIFICATIONS_WEBHOOKS_RELOAD_MS`).
    public var webhookReloadInterval: Duration = .seconds(5)
    /// How many endpoints the admin API may store (`KONTO_NOTIFICATIONS_WEBHOOKS_MAX`).
    public var maxStoredWebhooks = 50
    /// The courier's settings; nil: no mail (the webhooks stay, for operators who send their own).
    public var mail: MailSettings?
    /// Where `GET /metrics` is served (`KONTO_NOTIFICATIONS_METRICS_HOST`, `_PORT`); nil: not served.
    public var metricsHost = "127.0.0.1"
    public var metricsPort: Int?

    public init(
        host: String = "127.0.0.1",
        port: Int = NotificationsContract.defaultPort,
        secret: WireSecret,
        database: PostgresSettings? = nil,
        options: NotificationOptions = NotificationOptions(),
        webhooks: [WebhookEndpoint] = [],
        mail: MailSettings? = nil
    ) {
        self.host = host
        self.port = port
        self.secret = secret
        self.verifiers = WireVerifiers(secret)
        self.mailSealKey = secret
        self.database = database
        self.options = options
        self.webhooks = webhooks
        self.mail = mail
    }

    /// Reads the variables docs/CONFIGURATION.md lists; every problem names its variable.
    public init(environment: ServiceEnvironment, logger: Logger) throws {
        let database = try environment.database(url: "KONTO_NOTIFICATIONS_DATABASE_URL", connections: "KONTO_NOTIFICATIONS_DATABASE_CONNECTIONS")
        var options = NotificationOptions()
        options.visibilityTimeout = .seconds(try environment.integer("KONTO_NOTIFICATIONS_VISIBILITY_SECONDS", default: 30, in: 1...86_400))
        options.maxAttempts = try environment.integer("KONTO_NOTIFICATIONS_MAX_ATTEMPTS", default: options.maxAttempts, in: 1...1_000)
        options.retryBase = try environment.milliseconds("KONTO_NOTIFICATIONS_RETRY_BASE_MS", default: options.retryBase, in: 1...3_600_000)
        options.retryMaximum = .seconds(try environment.integer("KONTO_NOTIFICATIONS_RETRY_MAX_SECONDS", default: 300, in: 1...86_400))
        options.pollInterval = try environment.milliseconds("KONTO_NOTIFICATIONS_POLL_MS", default: options.pollInterval, in: 10...60_000)
        options.retention = .seconds(86_400 * (try environment.integer("KONTO_NOTIFICATIONS_RETENTION_DAYS", default: 30, in: 1...3_650)))
        options.erasureGrace = .seconds(try environment.integer("KONTO_NOTIFICATIONS_ERASURE_GRACE_SECONDS", default: 86_400, in: 0...(30 * 86_400)))
        options.sweepInterval = try environment.milliseconds("KONTO_NOTIFICATIONS_SWEEP_MS", default: options.sweepInterval, in: 10...3_600_000)
        let keys = try environment.wireKeys(service: NotificationsContract.serviceName, calls: false, serves: true)
        self.init(
            host: environment.string("KONTO_NOTIFICATIONS_HOST", default: "127.0.0.1"),
            port: try environment.port("KONTO_NOTIFICATIONS_PORT", default: NotificationsContract.defaultPort),
            secret: keys.callerKey,
            database: database,
            options: options,
            webhooks: try environment.string("KONTO_NOTIFICATIONS_WEBHOOKS").map { try WebhookEndpoint.load(path: $0) } ?? [],
            mail: try MailSettings(environment: environment)
        )
        verifiers = keys.verifiers
        allowsLocalWebhooks = try environment.flag("KONTO_NOTIFICATIONS_WEBHOOKS_ALLOW_LOCAL", default: false)
        webhookReloadInterval = try environment.milliseconds("KONTO_NOTIFICATIONS_WEBHOOKS_RELOAD_MS", default: webhookReloadInterval, in: 100...600_000)
        maxStoredWebhooks = try environment.integer("KONTO_NOTIFICATIONS_WEBHOOKS_MAX", default: maxStoredWebhooks, in: 0...1_000)
        mailSealKey = try environment.dataKey("KONTO_MAIL_SEAL_KEY", keys: keys)
        metricsHost = environment.string("KONTO_NOTIFICATIONS_METRICS_HOST", default: metricsHost)
        if environment.string("KONTO_NOTIFICATIONS_METRICS_PORT") != nil {
            metricsPort = try environment.port("KONTO_NOTIFICATIONS_METRICS_PORT", default: 0)
        }
        do {
            self.wireTLS = try WireTLS.fromEnvironment { environment.string($0) }
        } catch {
            throw ServiceEnvironmentError(variable: error.variable, problem: error.problem)
        }
    }
}

import Foundation
import HTTPTypes
import KontoContracts
import KontoModel
import KontoRuntime
import KontoWire
import Logging

/// Where the gateway listens, where the services are, and its limits; from the environment (docs/CONFIGURATION.md lists the
/// variables) or built directly by tests and the dev stack.
public struct GatewayConfiguration: Sendable {
    public struct Upstream: Sendable {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
    }

    public var host: String
    public var port: Int
    public var secret: WireSecret
    /// TLS on the wire (`KONTO_WIRE_TLS_CERT`, `_KEY`, `_CA`); nil: plain TCP.
    public var wireTLS: WireTLS?
    public var identity: Upstream
    public var profile: Upstream
    public var notifications: Upstream
    /// The account keys, as Identity and Profile are configured (the same file): for `GET /v1/schema` and checking
    /// details before they are sent on.
    public var accounts: AccountConfiguration
    /// Every service call's deadline.
    public var upstreamTimeout: Duration = .seconds(5)
    /// Wire connections per service.
    public var connectionsPerService = 4
    /// Wire connections to Notifications for event streams; each carries up to 16 streams (the wire's limit of
    /// subscriptions per connection).
    public var eventStreamConnections = 8
    /// How often an event stream sends a comment and checks that its session is still valid.
    public var eventStreamHeartbeat: Duration = .seconds(15)
    /// A session of an account whose address is not verified may only read, verify, change its userId, log out and
    /// delete (`KONTO_IDENTITY_REQUIRE_VERIFIED_EMAIL`): no details written, no second factor added.
    public var requireVerifiedEmail = false
    /// Whether Identity signs in with codes mailed to the userId (`KONTO_IDENTITY_EMAIL_CODE_LOGIN`, Identity's
    /// setting): the console offers it where it does.
    public var emailCodeLogin = false
    /// Where the deployment is reached from outside (`KONTO_PUBLIC_URL`, e.g. `https://accounts.example.org`): the
    /// console's provider sign-in sends providers back to it. Without it the console offers no providers.
    public var publicURL: String?
    public var maximumBodyBytes = 64 * 1024
    /// The largest account import (NDJSON) the admin listener reads (`KONTO_GATEWAY_ADMIN_IMPORT_MAX_BYTES`).
    public var maximumImportBytes = 8 << 20
    /// A connection with no request in flight for this long is closed.
    public var idleTimeout: Duration = .seconds(60)
    /// A connection must deliver a complete request head within this of being ready for one (slow clients).
    public var requestHeadTimeout: Duration = .seconds(15)
    /// Requests per minute per client address to any route (also the burst); 0 for no limit.
    public var rateLimitPerMinute = 600
    /// Requests per minute per client address to login, sign-up, reauthentication and password reset; 0 for none.
    public var credentialsRateLimitPerMinute = 30
    /// Browser origins allowed to call the API (CORS); `["*"]` for any; empty for none (no CORS headers).
    public var corsOrigins: [String] = []
    /// Behind a trusted proxy: the header carrying the client's address (its right-most entry that is not a trusted
    /// proxy is used), read only from ``trustedProxies``.
    public var clientAddressHeader: String?
    /// The proxies whose client-address header and `X-Forwarded-Proto` are believed; no one's when empty.
    public var trustedProxies: TrustedProxies = .none
    /// How long a session check or account's details are served from the cache (kept honest by account events);
    /// zero turns the cache off (every request asks the services).
    public var cacheTimeToLive: Duration = .seconds(30)
    /// Sessions, and accounts, the cache holds at most.
    public var cacheCapacity = 20_000
    /// How long the answer to a logout, password change, userId change, reset or deletion waits, at most, until every
    /// gateway's cache has dropped the account (`notifications.tailBarrier`); zero answers at once.
    public var cacheBarrierTimeout: Duration = .seconds(3)
    /// Where the web account console is served (`/account`); nil turns it off.
    public var consolePath: String? = ServiceEnvironment.defaultConsolePath
    /// A sentence the console adds wherever it says a mail is on its way; set by the dev stack without a mail server
    /// (where the mail's link is shown instead). No variable: a deployment's mail goes where its mail server sends it.
    public var consoleMailNote: String?
    /// Whether the console offers to continue without an account (an anonymous session).
    public var consoleAllowsAnonymous = false
    /// The console's cookies are `Secure`: always (true), never (false), or (nil) when a trusted proxy
    /// (``trustedProxies``) says the request came over HTTPS in `X-Forwarded-Proto`.
    public var consoleSecureCookies: Bool?
    /// The admin listener (docs/ADMIN.md): off unless a port is given (`KONTO_GATEWAY_ADMIN_PORT`); on loopback unless
    /// told otherwise (`KONTO_GATEWAY_ADMIN_HOST`). Never the public listener's address.
    public var adminHost = "127.0.0.1"
    public var adminPort: Int?
    /// Requests per minute and client address on the admin listener (0: unlimited).
    public var adminRateLimitPerMinute = 300

    public static let defaultPort = 8080

    public init(
        host: String = "127.0.0.1",
        port: Int = Self.defaultPort,
        secret: WireSecret,
        identity: Upstream = Upstream(host: "127.0.0.1", port: IdentityContract.defaultPort),
        profile: Upstream = Upstream(host: "127.0.0.1", port: ProfileContract.defaultPort),
        notifications: Upstream = Upstream(host: "127.0.0.1", port: NotificationsContract.defaultPort),
        accounts: AccountConfiguration = .default
    ) {
        self.host = host
        self.port = port
        self.secret = secret
        self.identity = identity
        self.profile = profile
        self.notifications = notifications
        self.accounts = accounts
    }

    /// The gateway only calls: it can be given its own wire key (`KONTO_GATEWAY_WIRE_KEY`) instead of the
    /// deployment's root secret, so that the process facing the internet cannot speak as any other service.
    static func wireSecret(_ environment: ServiceEnvironment) throws -> WireSecret {
        guard let text = environment.string("KONTO_GATEWAY_WIRE_KEY") else {
            guard environment.string("KONTO_WIRE_SECRET") != nil else {
                // Named as the other services name theirs: the gateway's own key first, what a deployment gives it.
                throw ServiceEnvironmentError(
                    variable: "KONTO_GATEWAY_WIRE_KEY", problem: "is required (make it with: konto keys), or KONTO_WIRE_SECRET alone for development"
                )
            }
            return WireSecret(try environment.secret("KONTO_WIRE_SECRET"))
        }
        guard environment.string("KONTO_WIRE_SECRET") == nil else {
            throw ServiceEnvironmentError(variable: "KONTO_GATEWAY_WIRE_KEY", problem: "is set together with KONTO_WIRE_SECRET: give the gateway its own key only")
        }
        guard let bytes = WireSecret.hexBytes(text), bytes.count == 32 else {
            throw ServiceEnvironmentError(
                variable: "KONTO_GATEWAY_WIRE_KEY",
                problem: "must be 64 hexadecimal digits: printf 'konto.wire.peer.v1:gateway' | openssl dgst -sha256 -hmac \"$KONTO_WIRE_SECRET\""
            )
        }
        return WireSecret(peerKey: bytes, for: GatewayServer.serviceName)
    }

    /// Reads the variables docs/CONFIGURATION.md lists; every problem names its variable or file.
    public init(environment: ServiceEnvironment, logger: Logger) throws {
        let accounts = try environment.string("KONTO_ACCOUNTS_CONFIG").map { path in
            try AccountConfigurationLoader(logger: logger).load(path: path)
        } ?? .default
        self.init(
            host: environment.string("KONTO_GATEWAY_HOST", default: "127.0.0.1"),
            port: try environment.port("KONTO_GATEWAY_PORT", default: Self.defaultPort),
            secret: try Self.wireSecret(environment),
            identity: Upstream(host: environment.string("KONTO_IDENTITY_HOST", default: "127.0.0.1"), port: try environment.port("KONTO_IDENTITY_PORT", default: IdentityContract.defaultPort)),
            profile: Upstream(host: environment.string("KONTO_PROFILE_HOST", default: "127.0.0.1"), port: try environment.port("KONTO_PROFILE_PORT", default: ProfileContract.defaultPort)),
            notifications: Upstream(
                host: environment.string("KONTO_NOTIFICATIONS_HOST", default: "127.0.0.1"),
                port: try environment.port("KONTO_NOTIFICATIONS_PORT", default: NotificationsContract.defaultPort)
            ),
            accounts: accounts
        )
        upstreamTimeout = try environment.milliseconds("KONTO_GATEWAY_UPSTREAM_TIMEOUT_MS", default: upstreamTimeout, in: 10...600_000)
        connectionsPerService = try environment.integer("KONTO_GATEWAY_CONNECTIONS_PER_SERVICE", default: connectionsPerService, in: 1...64)
        eventStreamConnections = try environment.integer("KONTO_GATEWAY_EVENT_STREAM_CONNECTIONS", default: eventStreamConnections, in: 1...256)
        eventStreamHeartbeat = try environment.milliseconds("KONTO_GATEWAY_EVENT_HEARTBEAT_MS", default: eventStreamHeartbeat, in: 100...600_000)
        requireVerifiedEmail = try environment.flag("KONTO_IDENTITY_REQUIRE_VERIFIED_EMAIL", default: requireVerifiedEmail)
        emailCodeLogin = try environment.flag("KONTO_IDENTITY_EMAIL_CODE_LOGIN", default: emailCodeLogin)
        if let url = environment.string("KONTO_PUBLIC_URL") {
            guard let parsed = URL(string: url), let scheme = parsed.scheme, ["http", "https"].contains(scheme.lowercased()), parsed.host != nil,
                  parsed.query == nil, parsed.fragment == nil
            else {
                throw ServiceEnvironmentError(variable: "KONTO_PUBLIC_URL", problem: "must be an http(s) URL such as https://accounts.example.org")
            }
            publicURL = url.hasSuffix("/") ? String(url.dropLast()) : url
        }
        maximumBodyBytes = try environment.integer("KONTO_GATEWAY_MAX_BODY_BYTES", default: maximumBodyBytes, in: 1_024...(16 << 20))
        maximumImportBytes = try environment.integer("KONTO_GATEWAY_ADMIN_IMPORT_MAX_BYTES", default: maximumImportBytes, in: 1_024...(64 << 20))
        requestHeadTimeout = try environment.milliseconds("KONTO_GATEWAY_HEADER_TIMEOUT_MS", default: requestHeadTimeout, in: 100...600_000)
        idleTimeout = try environment.milliseconds("KONTO_GATEWAY_IDLE_TIMEOUT_MS", default: idleTimeout, in: 100...3_600_000)
        rateLimitPerMinute = try environment.integer("KONTO_GATEWAY_RATE_LIMIT_PER_MINUTE", default: rateLimitPerMinute, in: 0...1_000_000)
        credentialsRateLimitPerMinute = try environment.integer(
            "KONTO_GATEWAY_CREDENTIALS_RATE_LIMIT_PER_MINUTE", default: credentialsRateLimitPerMinute, in: 0...1_000_000)
        corsOrigins = environment.string("KONTO_GATEWAY_CORS_ORIGINS")?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } ?? []
        clientAddressHeader = environment.string("KONTO_GATEWAY_CLIENT_ADDRESS_HEADER").flatMap { $0.isEmpty ? nil : $0 }
        if let proxies = environment.string("KONTO_GATEWAY_TRUSTED_PROXIES") {
            do {
                trustedProxies = try TrustedProxies(parsing: proxies)
            } catch {
                throw ServiceEnvironmentError(variable: "KONTO_GATEWAY_TRUSTED_PROXIES", problem: "\"\(error.entry)\" is not an IP address or a CIDR range")
            }
        }
        if let header = clientAddressHeader {
            guard HTTPField.Name(header) != nil else {
                throw ServiceEnvironmentError(variable: "KONTO_GATEWAY_CLIENT_ADDRESS_HEADER", problem: "is not a header name")
            }
            // A header anyone may send is no client address: it is read from the trusted proxies only.
            guard !trustedProxies.isEmpty else {
                throw ServiceEnvironmentError(
                    variable: "KONTO_GATEWAY_CLIENT_ADDRESS_HEADER",
                    problem: "is read only from trusted proxies: set KONTO_GATEWAY_TRUSTED_PROXIES to their addresses or ranges"
                )
            }
        }
        // At most 55 s: Identity touches a session at most once a minute, so a session served from the cache must
        // still reach Identity often enough to stay active.
        cacheTimeToLive = try environment.milliseconds("KONTO_GATEWAY_CACHE_MS", default: cacheTimeToLive, in: 0...55_000)
        cacheCapacity = try environment.integer("KONTO_GATEWAY_CACHE_ENTRIES", default: cacheCapacity, in: 1...1_000_000)
        cacheBarrierTimeout = try environment.milliseconds(
            "KONTO_GATEWAY_CACHE_BARRIER_MS", default: cacheBarrierTimeout, in: 0...NotificationsContract.maximumBarrierTimeoutMilliseconds
        )
        adminHost = environment.string("KONTO_GATEWAY_ADMIN_HOST", default: adminHost)
        adminPort = try environment.string("KONTO_GATEWAY_ADMIN_PORT").map { _ in try environment.port("KONTO_GATEWAY_ADMIN_PORT", default: 0) }
        adminRateLimitPerMinute = try environment.integer("KONTO_GATEWAY_ADMIN_RATE_LIMIT_PER_MINUTE", default: adminRateLimitPerMinute, in: 0...1_000_000)
        if let adminPort, adminPort == port, adminHost == host || adminHost == "0.0.0.0" || host == "0.0.0.0" {
            throw ServiceEnvironmentError(variable: "KONTO_GATEWAY_ADMIN_PORT", problem: "is the public listener's port: the admin API needs a listener of its own")
        }
        consolePath = try ServiceEnvironment.consolePath(environment.string("KONTO_GATEWAY_CONSOLE_PATH", default: consolePath ?? "off"))
        consoleAllowsAnonymous = try environment.flag("KONTO_GATEWAY_CONSOLE_ANONYMOUS", default: consoleAllowsAnonymous)
        switch environment.string("KONTO_GATEWAY_CONSOLE_SECURE_COOKIES", default: "auto") {
        case "auto": consoleSecureCookies = nil
        case "true": consoleSecureCookies = true
        case "false": consoleSecureCookies = false
        default: throw ServiceEnvironmentError(variable: "KONTO_GATEWAY_CONSOLE_SECURE_COOKIES", problem: "must be auto, true or false")
        }
        do {
            wireTLS = try WireTLS.fromEnvironment { environment.string($0) }
        } catch {
            throw ServiceEnvironmentError(variable: error.variable, problem: error.problem)
        }
    }
}

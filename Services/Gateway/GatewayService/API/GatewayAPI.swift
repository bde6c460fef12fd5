import Foundation
import HTTPTypes
import KontoContracts
import KontoModel
import Logging
import NIOCore
import OpenAPIRuntime

/// The handlers of the operations openapi.yaml declares (the generated `APIProtocol`): each checks what only the
/// gateway can (the bearer token is present, If-Match is well-formed), calls the service that owns the operation,
/// and maps its answer. Refusals are thrown as ``GatewayProblem``s and rendered by ``ProblemMiddleware``.
struct GatewayAPI: APIProtocol {
    let upstreams: GatewayUpstreams
    let accounts: AccountConfiguration
    /// Puts every account answer together (``AccountAssembler``).
    let assembler: AccountAssembler
    /// `GET /v1/schema`'s body, built once from the configuration.
    let schema: Components.Schemas.Schema
    /// How often an event stream sends a comment and checks its session.
    let eventStreamHeartbeat: Duration
    /// Whether an unverified address holds back writes (``GatewayConfiguration/requireVerifiedEmail``).
    let requireVerifiedEmail: Bool
    let metrics: GatewayMetrics
    /// Session checks and details, invalidated by account events (``AccountCache``).
    let cache: AccountCache
    /// How long an answer to a change that ends sessions waits, at most, for every gateway's cache to drop the
    /// account (``awaitCaches(_:)``); zero: not at all.
    let barrierTimeout: Duration

    init(
        upstreams: GatewayUpstreams, accounts: AccountConfiguration, eventStreamHeartbeat: Duration, requireVerifiedEmail: Bool = false,
        metrics: GatewayMetrics, cache: AccountCache, barrierTimeout: Duration = .zero
    ) throws {
        self.requireVerifiedEmail = requireVerifiedEmail
        self.barrierTimeout = barrierTimeout
        self.upstreams = upstreams
        self.accounts = accounts
        self.assembler = AccountAssembler(configuration: accounts)
        self.cache = cache
        self.metrics = metrics
        self.eventStreamHeartbeat = eventStreamHeartbeat
        self.schema = try Self.convert(accounts, to: Components.Schemas.Schema.self)
    }

    // MARK: Helpers

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    /// One Codable shape as another with the same JSON (the model's types and the document's generated ones).
    static func convert<Value: Encodable, Target: Decodable>(_ value: Value, to target: Target.Type) throws -> Target {
        try JSONDecoder().decode(Target.self, from: encoder.encode(value))
    }

    static func accountSession(_ session: IdentityAccountSession) throws -> Components.Schemas.AccountSession {
        Components.Schemas.AccountSession(
            accountId: session.accountId,
            session: .init(token: session.session.token.value, expiresAt: session.session.expiresAt.date),
            details: session.details,
            recoveryCodesRemaining: session.recoveryCodesRemaining
        )
    }

    /// The bearer token of the request, or 401.
    static func bearerToken() throws(GatewayProblem) -> BearerToken {
        guard let token = RequestScope.scope.bearerToken, token.utf8.count <= 512 else { throw .unauthenticated }
        return BearerToken(token)
    }

    /// The session behind the request's bearer token, or 401: from the cache while it is live (a logout or
    /// revocation drops it there before the next request, see ``AccountCache``), else checked with Identity.
    func authenticate() async throws(GatewayProblem) -> (BearerToken, IdentitySessionInfo) {
        if let presented = RequestScope.scope.bearerToken, Self.isAccessToken(presented) {
            // An application's access token: it reaches only what its scopes allow (``accessGrant(requiring:)``).
            _ = try await accessGrant(presented, requiring: [])
            throw Self.insufficientScope("An application's access token reads the account (GET /v1/account) and nothing else here.", scopes: [])
        }
        let token = try Self.bearerToken()
        let key = AccountCache.TokenKey(token.value)
        if let session = cache.session(for: key) {
            metrics.cache("session", hit: true)
            return (token, session)
        }
        let ticket = cache.ticket()
        let session = try await upstreams.identity(IdentityContract.validateSession, IdentitySessionRequest(token: token))
        if let ticket {
            metrics.cache("session", hit: false)
            cache.store(session, for: key, ticket: ticket)
        }
        return (token, session)
    }

    /// An OpenID access token (RFC 9068, a JWT: three dot-separated parts), never a session token (base64url, no dots).
    static func isAccessToken(_ token: String) -> Bool {
        token.utf8.count <= 4_096 && token.split(separator: ".", omittingEmptySubsequences: false).count == 3
    }

    /// What a live access token grants, when its scopes include `scopes`: the account and the subject its client knows
    /// it by; 401 for an invalid, expired or revoked token (or where Konto is no OpenID Provider), 403
    /// `request.insufficientScope` for too few scopes.
    func accessGrant(_ token: String, requiring scopes: Set<String>) async throws(GatewayProblem) -> (account: IdentityAccountFacts, subject: String) {
        let grant = try await upstreams.identity(IdentityContract.openIDAccessToken, IdentityOpenIDAccessTokenRequest(token: BearerToken(token)))
        guard grant.error == nil, let account = grant.account, let granted = grant.scopes, let subject = grant.subject else {
            throw GatewayProblem(
                status: .unauthorized, code: .unauthenticated, detail: AccountError(code: .unauthenticated).message,
                headers: [.wwwAuthenticate: "Bearer error=\"invalid_token\""]
            )
        }
        guard scopes.isSubset(of: granted) else {
            throw Self.insufficientScope("This access token's scopes do not include \(scopes.sorted().joined(separator: " ")).", scopes: scopes)
        }
        return (account, subject)
    }

    static func insufficientScope(_ detail: String, scopes: Set<String>) -> GatewayProblem {
        let scope = scopes.isEmpty ? "" : ", scope=\"\(scopes.sorted().joined(separator: " "))\""
        return GatewayProblem(status: .forbidden, code: .requestInsufficientScope, detail: detail, headers: [.wwwAuthenticate: "Bearer error=\"insufficient_scope\"\(scope)"])
    }

    /// Runs a call that may end the request's session or change its account, then drops what the cache holds of
    /// that account (whether the call succeeded or not: one that timed out may still have happened). The session is
    /// checked first (from the cache, else with Identity), so a made-up token is a 401 that touches nothing, and the
    /// account is always known: no request can empty the whole cache.
    /// Refuses (`account.emailNotVerified`) what a session of an unverified account may not do where the deployment
    /// requires verified addresses: write details, add or confirm a second factor, link a provider's identity. Reading,
    /// verifying, a new userId (to mend a mistyped address), logging out and deleting stay open. An account without an
    /// address (nil) is not held back.
    func requireVerifiedAddress(_ session: IdentitySessionInfo) throws(GatewayProblem) {
        if requireVerifiedEmail, session.account.emailVerified == false {
            throw GatewayProblem(AccountError(code: .emailNotVerified))
        }
    }

    func changingAccount<T>(_ body: (BearerToken, IdentitySessionInfo) async throws -> T) async throws -> T {
        let (token, session) = try await authenticate()
        defer {
            cache.invalidate(accountId: session.accountId)
            cache.invalidate(token: AccountCache.TokenKey(token.value))
        }
        return try await body(token, session)
    }

    /// Waits until every gateway's cache has read the events a change wrote (`notifications.tailBarrier`), so that
    /// the very next request, at any gateway, is refused the ended session. Bounded: past ``barrierTimeout``, or with
    /// Notifications unreachable, it returns anyway (the change is made; a cache left behind drops the account when
    /// the event reaches it, and a cache whose tail ended is off). Counted in `konto_gateway_cache_barriers_total`.
    func awaitCaches(_ eventIds: [UUID]?) async {
        guard let eventIds, !eventIds.isEmpty, barrierTimeout > .zero else { return }
        let start = ContinuousClock.now
        let request = NotificationsTailBarrierRequest(
            eventIds: Array(eventIds.prefix(NotificationsContract.maximumBarrierEvents)),
            timeoutMilliseconds: Int(barrierTimeout.milliseconds)
        )
        let outcome: String
        do {
            // The call's deadline is the wait's, with room for the answer: a Notifications that cannot reach its
            // database (or is late) holds the change back no longer than the barrier would.
            let deadline = TimeAmount(barrierTimeout + .milliseconds(100))
            let barrier = try await upstreams.notifications(NotificationsContract.tailBarrier, request, timeout: deadline)
            outcome = barrier.complete ? "complete" : "timeout"
            if !barrier.complete {
                RequestScope.scope.logger.warning("a change answered before every gateway's cache had it", metadata: ["konto.readers_behind": "\(barrier.readersBehind)"])
            }
        } catch {
            outcome = "failed"
        }
        metrics.cacheBarrier(outcome: outcome, duration: .now - start)
    }

    static func etag(_ version: Int64) -> String {
        "\"\(version)\""
    }

    /// The version an `If-Match` names (`"7"`, `W/"7"` or `*` for any); 400 for one that is not an ETag of ours.
    ///
    /// `decoded` is the generated input's value: swift-openapi-runtime decodes a header as a URI component (and its
    /// clients, KontoClient among them, percent-encode the quotes of an ETag), which also made a malformed value such
    /// as `g5cCj\&X%i]` into none, so a change went through without its precondition (schemathesis found it). So the
    /// header as sent (``RequestScope/ifMatch``) counts too: a value is taken when either reading is an ETag, and
    /// refused when the header was sent and neither is. A console's call made in process has only `decoded`.
    static func expectedVersion(ifMatch decoded: String?) throws(GatewayProblem) -> Int64? {
        let sent = RequestScope.current?.ifMatch
        // An empty If-Match is taken as none, as an empty header field is by most clients.
        guard let text = sent ?? decoded, !text.isEmpty else { return nil }
        for candidate in [sent, decoded].compactMap({ $0 }) {
            if candidate == "*" { return nil }
            if let version = Self.etagVersion(candidate) { return version }
        }
        throw GatewayProblem.malformed("If-Match must be an ETag from GET /v1/account (or *).")
    }

    /// The version of an ETag of ours (`"7"`, `W/"7"`), nil for anything else.
    static func etagVersion(_ text: String) -> Int64? {
        var value = Substring(text)
        if value.hasPrefix("W/") { value = value.dropFirst(2) }
        guard value.count >= 3, value.hasPrefix("\""), value.hasSuffix("\""),
              case let digits = value.dropFirst().dropLast(), digits.count <= 18, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber)
        else { return nil }
        return Int64(digits)
    }

    static var clientAddress: String? { RequestScope.scope.clientAddress }
    /// What the client calls itself (its User-Agent), for the sessions it signs in (Identity bounds and cleans it).
    static var clientName: String? { RequestScope.scope.clientName }
}

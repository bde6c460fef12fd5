import HTTPTypes
import Hummingbird
import KontoContracts
import NIOCore

/// Answers `GET /v1/account` from the cache, with the answer's JSON encoded once when it was stored, without going
/// through the generated handler.
///
/// Why: in `konto-bench gateway` (every read a cache hit) JSONEncoder re-encoding the same cached `Account` was
/// about a fifth of the gateway's CPU (perf: `Converter.setResponseBodyAsJSON`, mostly the free-form details'
/// dynamic casts). This runs after ``RequestMiddleware``, so request ids, rate limits, metrics and problem
/// documents are as for any route; on anything but a hit for both the session and the account it passes the
/// request on to the generated handler, which is the reference: a test checks that a hit's status, headers and
/// body are byte for byte those of the handler's answer for the same account.
struct CachedAccountMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    let cache: AccountCache
    let metrics: GatewayMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get, request.uri.path == "/v1/account",
              let token = RequestScope.current?.bearerToken, token.utf8.count <= 512,
              let session = cache.session(for: AccountCache.TokenKey(token)),
              let cached = cache.account(session.accountId), cached.matches(session)
        else {
            return try await next(request, context)
        }
        metrics.cache("session", hit: true)
        metrics.cache("account", hit: true)
        return Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8", .eTag: GatewayAPI.etag(cached.version)],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: cached.json))
        )
    }
}

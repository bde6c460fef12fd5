import HTTPTypes
import Hummingbird
import KontoContracts
import NIOCore

/// Answers `GET /v1/account` from the cache, with the answer's JSON encoded once when it was stored, without going
/// through the generated handler.
///
/// Why (measured, issue 29): the generated handler can only answer a JSON route through the OpenAPI runtime's
/// converter, which encodes the typed body again (a generated JSON response has no raw-bytes form). With the
/// handler serving the hits itself, `konto-bench gateway` (every read a hit) fell from 25.8k to 11.3k req/s
/// (medians of three runs, release, 2 cores, the document's `Account` already the assembler's own type). This runs inside the gateway's middlewares (scope, problems, rate and body limits), so request ids, rate limits, metrics and problem
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

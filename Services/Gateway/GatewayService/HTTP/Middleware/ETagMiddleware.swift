import Foundation
import Hummingbird

/// Restores the quoted form of a generated handler's `ETag`.
///
/// Why: the OpenAPI runtime percent-encodes header values, so the generated handlers' `ETag: "7"` leaves as
/// `%227%22`; HTTP's entity tag is the quoted form (the runtime decodes an If-Match either way).
struct ETagMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        if let etag = response.headers[.eTag], etag.contains("%"), let decoded = etag.removingPercentEncoding {
            response.headers[.eTag] = decoded
        }
        return response
    }
}

import Foundation
import HTTPTypes
import Hummingbird

/// Restores the quoted form of the generated handlers' `ETag` and `Content-Disposition`.
///
/// Why: the OpenAPI runtime percent-encodes header values, so the generated handlers' `ETag: "7"` leaves as
/// `%227%22` and an export's `attachment; filename="…"` as `attachment%3B%20filename%3D%22…`; HTTP's entity tag and
/// disposition are the quoted forms (the runtime decodes an If-Match either way).
struct QuotedHeadersMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    static let restored: [HTTPField.Name] = [.eTag, .contentDisposition]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        for name in Self.restored {
            if let value = response.headers[name], value.contains("%"), let decoded = value.removingPercentEncoding {
                response.headers[name] = decoded
            }
        }
        return response
    }
}

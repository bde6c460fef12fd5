import HTTPTypes
import Hummingbird

/// Headers every answer carries, whatever produced it (a handler, a refusal, the router's 404): the body is never
/// sniffed as another type, and nothing is stored by a browser or a shared cache unless the route said it may be
/// (answers carry session tokens and personal data).
struct ResponseHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.xContentTypeOptions] = "nosniff"
        if response.headers[.cacheControl] == nil {
            response.headers[.cacheControl] = "no-store"
        }
        return response
    }
}

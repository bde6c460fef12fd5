import HTTPTypes
import Hummingbird

/// CORS for browser apps: Hummingbird's CORSMiddleware (echoing the request's origin) for the configured origins
/// only; a request from any other origin gets no CORS headers, so the browser keeps its response from the page.
/// Runs outside ``ProblemMiddleware``, so problem responses carry the headers too.
struct CORSPolicy: RouterMiddleware {
    typealias Context = GatewayRequestContext

    static let exposedHeaders = ["ETag", "Retry-After", "X-Request-ID", "WWW-Authenticate"]

    /// nil for any origin.
    let origins: Set<String>?
    private let cors = CORSMiddleware<GatewayRequestContext>(
        allowOrigin: .originBased,
        allowHeaders: [.accept, .authorization, .contentType, .ifMatch, HTTPField.Name("Last-Event-ID")!, RequestScopeMiddleware.requestIDHeader, RequestScopeMiddleware.traceParentHeader],
        allowMethods: [.get, .post, .put, .patch, .delete, .options],
        exposedHeaders: Self.exposedHeaders,
        maxAge: .seconds(600)
    )

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin], origins?.contains(origin) ?? true else {
            return try await next(request, context)
        }
        var response = try await cors.handle(request, context: context, next: next)
        // CORSMiddleware names the exposed headers on the preflight only, where browsers ignore them; they belong on
        // the actual response.
        if request.method != .options {
            response.headers[.accessControlExposeHeaders] = Self.exposedHeaders.joined(separator: ", ")
        }
        return response
    }
}

import Hummingbird

/// Refuses a client address over the general rate limit (429 with `Retry-After`) before any other work.
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    let rateLimits: GatewayRateLimits

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if case .limited(let retryAfter) = rateLimits.check(path: request.uri.path, address: RequestScope.current?.clientAddress) {
            throw GatewayRateLimits.refusal(retryAfter: retryAfter)
        }
        return try await next(request, context)
    }
}

import Hummingbird

/// Counts and times every answer by route (the console's too), method and status (refusals included: it runs outside
/// ``ProblemMiddleware``, which turns them into answers).
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    let metrics: GatewayMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        // The router records the route it matched in the context's shared storage, so it is readable here after `next`.
        metrics.request(
            path: request.uri.path, endpoint: context.endpointPath, method: request.method.rawValue, status: response.status.code, duration: .now - start
        )
        return response
    }
}

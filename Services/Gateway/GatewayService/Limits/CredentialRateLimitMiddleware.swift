import HTTPTypes
import OpenAPIRuntime

/// The credential rate limit on the API's routes, keyed on the operation the router matched (not the raw path, which
/// has many spellings for one route): `POST /v1/sessions` is `logIn` however its slashes are written.
struct CredentialRateLimitMiddleware: ServerMiddleware {
    let limits: GatewayRateLimits

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        if GatewayRateLimits.credentialOperations.contains(operationID),
           case .limited(let retryAfter) = limits.checkCredentials(address: RequestScope.scope.clientAddress) {
            throw GatewayRateLimits.refusal(retryAfter: retryAfter)
        }
        return try await next(request, body, metadata)
    }
}

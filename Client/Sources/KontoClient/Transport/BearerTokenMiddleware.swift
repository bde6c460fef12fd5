import HTTPTypes
import OpenAPIRuntime

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Presents the session's token (`Authorization: Bearer …`) on the calls made within
/// ``BearerTokenMiddleware/$token``'s scope. The document's security schemes are not rendered as parameters by the
/// generator, and the token belongs to the call (the session store may change between calls), not to the client.
struct BearerTokenMiddleware: ClientMiddleware {
    @TaskLocal static var token: String?

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let token = Self.token {
            request.headerFields[.authorization] = "Bearer \(token)"
        }
        return try await next(request, body, baseURL)
    }
}

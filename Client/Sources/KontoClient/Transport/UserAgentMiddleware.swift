import HTTPTypes
import OpenAPIRuntime

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Names the client in every request's `User-Agent`: the account's list of sessions shows it beside each session the
/// client signs in, so its owner can tell their devices apart.
struct UserAgentMiddleware: ClientMiddleware {
    let name: String

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.userAgent] = name
        return try await next(request, body, baseURL)
    }
}

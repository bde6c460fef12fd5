import HTTPTypes
import OpenAPIRuntime

/// Hands the generated handlers no body for a request that carries none.
///
/// swift-openapi-hummingbird gives every request an `HTTPBody`, also one with neither Content-Length nor
/// Transfer-Encoding, which has no body (RFC 9112 §6.3). An operation whose body is optional (`DELETE /v1/account`)
/// would then decode zero bytes as JSON and answer 400; a required body still answers 400, as missing.
struct AbsentBodyMiddleware: ServerMiddleware {
    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        try await next(request, Self.carriesBody(request) ? body : nil, metadata)
    }

    static func carriesBody(_ request: HTTPRequest) -> Bool {
        if request.headerFields[.transferEncoding] != nil { return true }
        guard let length = request.headerFields[.contentLength] else { return false }
        return length != "0"
    }
}

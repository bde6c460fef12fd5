import HTTPTypes
import OpenAPIRuntime

/// Registers only the operations whose path a listener serves, on the transport beneath (a router): the public
/// listener's router never holds an admin route, and the admin listener's holds nothing else (one document, one
/// generated `APIProtocol`, two listeners).
struct PathFilteringTransport: ServerTransport {
    let base: any ServerTransport
    let serves: @Sendable (String) -> Bool

    func register(
        _ handler: @Sendable @escaping (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?),
        method: HTTPRequest.Method,
        path: String
    ) throws {
        guard serves(path) else { return }
        try base.register(handler, method: method, path: path)
    }
}

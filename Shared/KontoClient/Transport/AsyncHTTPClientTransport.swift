import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// ``KontoTransport`` over async-http-client: the gateway's base URL, a deadline per exchange, and a bound on the
/// answer's size (read no further than that).
public struct AsyncHTTPClientTransport: KontoTransport {
    public var baseURL: String
    public var timeout: TimeAmount
    public var maximumResponseBytes: Int
    private let client: HTTPClient

    /// `client` defaults to the shared one (`HTTPClient.shared`), which needs no shutdown.
    public init(baseURL: String, client: HTTPClient = .shared, timeout: TimeAmount = .seconds(30), maximumResponseBytes: Int = 4 << 20) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.client = client
        self.timeout = timeout
        self.maximumResponseBytes = maximumResponseBytes
    }

    public func send(_ request: KontoHTTPRequest) async throws -> KontoHTTPResponse {
        var outgoing = HTTPClientRequest(url: baseURL + request.path)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers {
            outgoing.headers.replaceOrAdd(name: name, value: value)
        }
        if let body = request.body {
            outgoing.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await client.execute(outgoing, timeout: timeout)
        let body = try await response.body.collect(upTo: maximumResponseBytes)
        var headers: [String: String] = [:]
        for (name, value) in response.headers {
            headers[name.lowercased()] = headers[name.lowercased()].map { "\($0), \(value)" } ?? value
        }
        return KontoHTTPResponse(status: Int(response.status.code), headers: headers, body: Array(body.readableBytesView))
    }
}

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
        let response = try await client.execute(Self.outgoing(request, baseURL: baseURL), timeout: timeout)
        let body = try await response.body.collect(upTo: maximumResponseBytes)
        return KontoHTTPResponse(status: Int(response.status.code), headers: Self.headers(response.headers), body: Array(body.readableBytesView))
    }

    public func stream(_ request: KontoHTTPRequest) async throws -> KontoHTTPStream {
        // No deadline: the body (an event stream) lasts as long as the session; connecting is still bounded by the
        // client's connect timeout, and the gateway's heartbeats keep the connection busy.
        let response = try await client.execute(Self.outgoing(request, baseURL: baseURL), deadline: .distantFuture)
        let body = AsyncThrowingStream<[UInt8], any Error> { continuation in
            let reader = Task {
                do {
                    for try await buffer in response.body {
                        continuation.yield(Array(buffer.readableBytesView))
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in reader.cancel() }
        }
        return KontoHTTPStream(status: Int(response.status.code), headers: Self.headers(response.headers), body: body)
    }

    private static func outgoing(_ request: KontoHTTPRequest, baseURL: String) -> HTTPClientRequest {
        var outgoing = HTTPClientRequest(url: baseURL + request.path)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers {
            outgoing.headers.replaceOrAdd(name: name, value: value)
        }
        if let body = request.body {
            outgoing.body = .bytes(ByteBuffer(bytes: body))
        }
        return outgoing
    }

    private static func headers(_ fields: HTTPHeaders) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in fields {
            headers[name.lowercased()] = headers[name.lowercased()].map { "\($0), \(value)" } ?? value
        }
        return headers
    }
}

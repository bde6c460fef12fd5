/// How ``KontoClient`` reaches the gateway: one HTTP exchange. Linux uses ``AsyncHTTPClientTransport``; an Apple
/// platform can bring one over URLSession, and tests can answer in memory.
public protocol KontoTransport: Sendable {
    func send(_ request: KontoHTTPRequest) async throws -> KontoHTTPResponse
    /// An exchange whose answer is read as it comes (the event stream), with no deadline on the body.
    func stream(_ request: KontoHTTPRequest) async throws -> KontoHTTPStream
}

extension KontoTransport {
    /// A transport that cannot stream answers the whole body at once.
    public func stream(_ request: KontoHTTPRequest) async throws -> KontoHTTPStream {
        let response = try await send(request)
        return KontoHTTPStream(status: response.status, headers: response.headers, body: AsyncThrowingStream { continuation in
            continuation.yield(response.body)
            continuation.finish()
        })
    }
}

/// An answer whose body arrives in chunks.
public struct KontoHTTPStream: Sendable {
    public var status: Int
    /// Header names in lower case.
    public var headers: [String: String]
    public var body: AsyncThrowingStream<[UInt8], any Error>

    public init(status: Int, headers: [String: String] = [:], body: AsyncThrowingStream<[UInt8], any Error>) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }

    /// The body read whole, up to `limit` bytes (an error answer's problem document).
    func collect(upTo limit: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in body {
            bytes += chunk.prefix(limit - bytes.count)
            if bytes.count >= limit { break }
        }
        return bytes
    }
}

/// The bytes of a chunked body one by one, for a parser that reads bytes.
struct KontoByteSequence: AsyncSequence, Sendable {
    typealias Element = UInt8
    let chunks: AsyncThrowingStream<[UInt8], any Error>

    struct AsyncIterator: AsyncIteratorProtocol {
        var chunks: AsyncThrowingStream<[UInt8], any Error>.AsyncIterator
        var chunk: [UInt8] = []
        var index = 0

        mutating func next() async throws -> UInt8? {
            while index == chunk.count {
                guard let next = try await chunks.next() else { return nil }
                chunk = next
                index = 0
            }
            defer { index += 1 }
            return chunk[index]
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(chunks: chunks.makeAsyncIterator())
    }
}

public struct KontoHTTPRequest: Sendable, Equatable {
    public var method: String
    /// The path and query, e.g. `/v1/account`.
    public var path: String
    public var headers: [String: String]
    public var body: [UInt8]?

    public init(method: String, path: String, headers: [String: String] = [:], body: [UInt8]? = nil) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }
}

public struct KontoHTTPResponse: Sendable, Equatable {
    public var status: Int
    /// Header names in lower case.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }
}

/// How ``KontoClient`` reaches the gateway: one HTTP exchange. Linux uses ``AsyncHTTPClientTransport``; an Apple
/// platform can bring one over URLSession, and tests can answer in memory.
public protocol KontoTransport: Sendable {
    func send(_ request: KontoHTTPRequest) async throws -> KontoHTTPResponse
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

import AsyncHTTPClient
import Foundation
import NIOPosix

/// Where an endpoint added through the admin API is delivered to: its host resolved at delivery, and the connection
/// made to an address that passes ``WebhookEndpoint/isLocal(host:)``, the name kept for TLS (SNI, the certificate) and
/// `Host`. A name checked only when it was added could later resolve inside (DNS rebinding, `kubernetes.default.svc`,
/// a name an operator's key chose for that), so the check is made on what the connection will use.
///
/// One HTTP client per address the host resolved to (async-http-client's `dnsOverride` pins a client's connections),
/// kept until the endpoint stops being served.
actor WebhookAddressPin {
    /// Resolves a host name to its addresses (text), as the connection would.
    struct Resolver: Sendable {
        let addresses: @Sendable (String) async -> [String]

        /// getaddrinfo(3), on NIO's blocking-work pool.
        static let system = Resolver { host in
            (try? await NIOThreadPool.singleton.runIfActive { Self.getaddrinfo(host) }) ?? []
        }

        private static func getaddrinfo(_ host: String) -> [String] {
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var first: UnsafeMutablePointer<addrinfo>?
            guard Glibc.getaddrinfo(host, nil, &hints, &first) == 0 else { return [] }
            defer { freeaddrinfo(first) }
            var addresses: [String] = []
            var next = first
            while let info = next {
                var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
                if let address = info.pointee.ai_addr,
                   getnameinfo(address, info.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 {
                    addresses.append(String(cString: text))
                }
                next = info.pointee.ai_next
            }
            return addresses
        }
    }

    /// What a delivery is refused with when the host has no public address: the same words whether it resolved
    /// inside or not at all.
    static let refusal = "no public address for the host"

    private let host: String
    private let configuration: HTTPClient.Configuration
    private let resolver: Resolver
    private var clients: [String: HTTPClient] = [:]

    init(host: String, configuration: HTTPClient.Configuration, resolver: Resolver) {
        self.host = host
        self.configuration = configuration
        self.resolver = resolver
    }

    /// Whether `url`'s host is a name to pin (an address written in the URL was checked when the endpoint was added).
    static func needsPin(_ url: URL) -> Bool {
        guard var host = url.host else { return false }
        if host.hasPrefix("[") { host = String(host.dropFirst().dropLast()) }
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) != 1 && inet_pton(AF_INET6, host, &v6) != 1
    }

    /// A client whose connections go to a public address of the host, or nil when it has none.
    func client() async -> HTTPClient? {
        let addresses = await resolver.addresses(host)
        guard let address = addresses.first(where: { !WebhookEndpoint.isLocal(host: $0) }) else { return nil }
        if let client = clients[address] { return client }
        var configuration = configuration
        configuration.dnsOverride = [host: address]
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        clients[address] = client
        return client
    }

    /// The addresses connections were pinned to so far.
    var pinned: [String] { clients.keys.sorted() }

    func shutdown() async {
        for client in clients.values {
            try? await client.shutdown()
        }
        clients = [:]
    }
}

import AsyncHTTPClient
import KontoClient
import NIOCore
import OpenAPIAsyncHTTPClient

extension KontoClient {
    /// A client of the gateway at `gatewayURL` (e.g. `http://127.0.0.1:8080`) over async-http-client, as servers and
    /// Konto's own tools use it (on Linux, the transport that streams ``events(after:)``): `timeout` bounds each
    /// exchange until its answer begins (an event stream then lasts as long as the session).
    public convenience init(
        gatewayURL: String, httpClient: HTTPClient, timeout: TimeAmount = .seconds(30), sessions: any KontoSessionStore = InMemorySessionStore(),
        maximumResponseBytes: Int = 4 << 20, clientName: String = KontoClient.defaultClientName
    ) {
        self.init(
            gatewayURL: gatewayURL, transport: AsyncHTTPClientTransport(configuration: .init(client: httpClient, timeout: timeout)), sessions: sessions,
            maximumResponseBytes: maximumResponseBytes, clientName: clientName
        )
    }
}

extension KontoAdmin {
    /// The admin API over async-http-client.
    public init(adminURL: String, key: String, httpClient: HTTPClient, timeout: TimeAmount = .seconds(30)) {
        self.init(adminURL: adminURL, key: key, transport: AsyncHTTPClientTransport(configuration: .init(client: httpClient, timeout: timeout)))
    }
}

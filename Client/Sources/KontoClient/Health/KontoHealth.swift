/// `GET /health/ready`: whether the gateway and the services behind it are ready, and each service's state.
public struct KontoHealth: Sendable, Equatable {
    /// 200 when ready, 503 when not.
    public var status: Int
    public var isReady: Bool
    /// Each service's state by name (`identity: ok`, …).
    public var services: [String: String]

    init(status: Int, body: Components.Schemas.Health) {
        self.status = status
        isReady = body.status == .ok
        services = body.services?.additionalProperties ?? [:]
    }
}

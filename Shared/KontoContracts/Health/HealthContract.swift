import KontoWire

/// Every service answers this method, so a gateway, an orchestrator probe or a test can ask
/// whether it can do its work (readiness), not only whether its process is up.
public enum HealthContract {
    public static let check = WireMethod<HealthCheckRequest, HealthReport>("health.check")
}

public struct HealthCheckRequest: Codable, Sendable, Equatable {
    public init() {}
}

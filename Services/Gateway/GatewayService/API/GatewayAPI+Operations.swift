import KontoContracts
import OpenAPIRuntime

extension GatewayAPI {
    func live(_ input: Operations.Live.Input) async throws -> Operations.Live.Output {
        .ok(.init(body: .json(.init(status: .ok))))
    }

    func metrics(_ input: Operations.Metrics.Input) async throws -> Operations.Metrics.Output {
        .ok(.init(body: .plainText(HTTPBody(metrics.exposition()))))
    }

    /// Ready when every service answers its health check within the deadline.
    func ready(_ input: Operations.Ready.Input) async throws -> Operations.Ready.Output {
        async let identity = check { () async throws(GatewayProblem) in try await upstreams.identity(HealthContract.check, HealthCheckRequest()) }
        async let profile = check { () async throws(GatewayProblem) in try await upstreams.profile(HealthContract.check, HealthCheckRequest()) }
        async let notifications = check { () async throws(GatewayProblem) in try await upstreams.notifications(HealthContract.check, HealthCheckRequest()) }
        let services = [
            IdentityContract.serviceName: await identity,
            ProfileContract.serviceName: await profile,
            NotificationsContract.serviceName: await notifications,
        ]
        let health = Components.Schemas.Health(
            status: services.values.allSatisfy { $0 == "ok" } ? .ok : .unavailable,
            services: .init(additionalProperties: services)
        )
        return health.status == .ok ? .ok(.init(body: .json(health))) : .serviceUnavailable(.init(body: .json(health)))
    }

    private func check(_ call: () async throws(GatewayProblem) -> HealthReport) async -> String {
        do {
            let report = try await call()
            return report.status == .ready ? "ok" : "unavailable"
        } catch {
            return "unavailable"
        }
    }
}

import HTTPTypes
import KontoContracts
import KontoWire
import Logging
import NIOCore

/// The services behind the gateway, each through its pooled wire client. Every call carries the request's id and
/// trace context and has a deadline (the client's request timeout): a service that is down, busy or late is a 503
/// with `Retry-After`, never a hang.
struct GatewayUpstreams: Sendable {
    let identity: WireClient
    let profile: WireClient
    let notifications: WireClient
    /// Notifications again, for the long-lived event streams (each holds a subscription on a connection).
    let events: WireClient
    let timeout: TimeAmount
    let metrics: GatewayMetrics

    func identity<Request, Response>(_ method: WireMethod<Request, Response>, _ request: Request) async throws(GatewayProblem) -> Response {
        try await call(identity, service: IdentityContract.serviceName, method, request)
    }

    func profile<Request, Response>(_ method: WireMethod<Request, Response>, _ request: Request) async throws(GatewayProblem) -> Response {
        try await call(profile, service: ProfileContract.serviceName, method, request)
    }

    /// - Parameter timeout: the call's own deadline, where it is not the usual one (a barrier's wait).
    func notifications<Request, Response>(_ method: WireMethod<Request, Response>, _ request: Request, timeout: TimeAmount? = nil) async throws(GatewayProblem) -> Response {
        try await call(notifications, service: NotificationsContract.serviceName, method, request, timeout: timeout)
    }

    private func call<Request, Response>(
        _ client: WireClient,
        service: String,
        _ method: WireMethod<Request, Response>,
        _ request: Request,
        timeout: TimeAmount? = nil
    ) async throws(GatewayProblem) -> Response {
        let scope = RequestScope.scope
        let start = ContinuousClock.now
        var errorCode: String?
        defer { metrics.upstream(service: service, method: method.name, duration: .now - start, errorCode: errorCode) }
        do {
            return try await client.call(method, request, timeout: timeout ?? self.timeout, requestID: scope.requestID, traceParent: scope.traceParent)
        } catch let error as WireError {
            errorCode = error.code.rawValue
            let problem = GatewayProblem(upstream: error, service: service)
            if problem.status.kind == .serverError {
                scope.logger.warning("service call failed", metadata: [
                    "konto.service": "\(service)", "konto.method": "\(method.name)", "konto.error_code": "\(error.code)",
                ])
            }
            throw problem
        } catch is CancellationError {
            errorCode = "cancelled"
            throw GatewayProblem.unavailable(service)
        } catch {
            // Connection-level failures that did not become a WireError (resolution, refused connections).
            errorCode = "unreachable"
            scope.logger.warning("service call failed", metadata: [
                "konto.service": "\(service)", "konto.method": "\(method.name)", "konto.error": "\(String(describing: type(of: error)))",
            ])
            throw GatewayProblem.unavailable(service)
        }
    }
}

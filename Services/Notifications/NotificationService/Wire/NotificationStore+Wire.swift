import KontoContracts
import KontoWire
import Logging

extension NotificationStore {
    /// Serves the Notifications contract on `server`. Register before the server runs.
    public func register(on server: WireServer) {
        server.register(NotificationsContract.publish) { request, _ in try await self.publish(request) }
        server.register(NotificationsContract.declareGroup) { request, _ in try await self.declareGroup(request) }
        server.registerSubscription(NotificationsContract.subscribe) { request, context, subscriber in
            context.logger.debug("consumer subscribed", metadata: ["konto.group": "\(request.group)"])
            try await self.serveGroup(request, subscriber: subscriber)
        }
        server.registerSubscription(NotificationsContract.feed) { request, _, subscriber in
            try await self.serveFeed(request, subscriber: subscriber)
        }
        server.register(NotificationsContract.tailCursor) { _, _ in try await self.tailCursor() }
        server.registerSubscription(NotificationsContract.tail) { request, _, subscriber in
            try await self.serveTail(request, subscriber: subscriber)
        }
        server.register(NotificationsContract.deadLetters) { request, _ in try await self.deadLetters(request) }
        server.register(NotificationsContract.replayDeadLetters) { request, _ in try await self.replayDeadLetters(request) }
        server.register(NotificationsContract.replay) { request, _ in try await self.replay(request) }
        server.register(HealthContract.check) { _, _ in await self.healthReport() }
    }

    /// Readiness: the storage answers.
    public func healthReport() async -> HealthReport {
        let check: HealthReport.Check
        do {
            try await storage.checkHealth()
            check = .init(name: "storage", status: .ready)
        } catch {
            check = .init(name: "storage", status: .notReady, message: error.code.rawValue)
        }
        return HealthReport(service: NotificationsContract.serviceName, checks: [check])
    }
}

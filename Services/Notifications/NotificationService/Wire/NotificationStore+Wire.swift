import KontoContracts
import KontoModel
import KontoWire
import Logging

extension NotificationStore {
    /// Serves the Notifications contract on `server`. Register before the server runs.
    public func register(on server: WireServer) {
        // Event types belong to their publishers and groups to their declarers (EventOwnership): the caller the
        // handshake proved decides.
        server.register(NotificationsContract.publish) { request, context in try await self.publish(request, caller: context.peer) }
        server.register(NotificationsContract.declareGroup) { request, context in try await self.declareGroup(request, caller: context.peer) }
        server.registerSubscription(NotificationsContract.subscribe) { request, context, subscriber in
            context.logger.debug("consumer subscribed", metadata: ["konto.group": "\(request.group)"])
            try await self.serveGroup(request, caller: context.peer, subscriber: subscriber)
        }
        server.registerSubscription(NotificationsContract.feed) { request, _, subscriber in
            try await self.serveFeed(request, subscriber: subscriber)
        }
        server.register(NotificationsContract.accountHistory) { request, _ in try await self.accountHistory(request) }
        server.register(NotificationsContract.tailCursor) { request, _ in try await self.tailCursor(request) }
        server.registerSubscription(NotificationsContract.tail) { request, _, subscriber in
            try await self.serveTail(request, subscriber: subscriber)
        }
        server.register(NotificationsContract.tailBarrier) { request, _ in try await self.tailBarrier(request) }
        server.register(NotificationsContract.deadLetters) { request, context in try await self.deadLetters(request, caller: context.peer) }
        server.register(NotificationsContract.replayDeadLetters) { request, context in try await self.replayDeadLetters(request, caller: context.peer) }
        server.register(NotificationsContract.replay) { request, context in try await self.replay(request, caller: context.peer) }
        // Notifications' own groups, whoever (the allow-list's Gateway) asks: the operator's key was checked by Identity.
        server.register(NotificationsContract.failedDeliveries) { request, _ in try await self.failedDeliveries(request) }
        server.register(NotificationsContract.redeliver) { request, _ in try await self.redeliver(request) }
        server.register(NotificationsContract.webhookEndpoints) { _, _ in try await self.webhookEndpoints() }
        server.register(NotificationsContract.addWebhookEndpoint) { request, _ in try await self.addWebhookEndpoint(request) }
        server.register(NotificationsContract.removeWebhookEndpoint) { request, _ in try await self.removeWebhookEndpoint(request) }
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

import KontoContracts
import KontoModel
import KontoWire
import Logging
import ServiceLifecycle

/// One consumer of a Notifications consumer group, as a long-running service: declares the group, subscribes, hands
/// each event to `handle` and acknowledges it; subscribes again (with back-off) whenever the subscription ends.
///
/// `handle` must be idempotent: delivery is at least once. When it throws ``EventRejection`` the event is rejected
/// (dead letter at once); any other error asks for a retry (Notifications backs off, then dead-letters it).
public struct EventConsumer: Service {
    public struct Configuration: Sendable {
        public var group: String
        /// Event types (``AccountEvent/Kind/name``); nil for every type.
        public var types: [String]?
        /// Events handled at once at most (the subscription's credit).
        public var credit = 16
        /// Between subscriptions, while Notifications cannot be reached.
        public var backoff = Backoff(initial: .milliseconds(100), maximum: .seconds(5))

        public init(group: String, types: [String]?) {
            self.group = group
            self.types = types
        }
    }

    public typealias Handler = @Sendable (AccountEvent) async throws -> Void

    private let client: WireClient
    private let configuration: Configuration
    private let logger: Logger
    private let handle: Handler

    public init(client: WireClient, configuration: Configuration, logger: Logger, handle: @escaping Handler) {
        self.client = client
        self.configuration = configuration
        self.logger = logger
        self.handle = handle
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await self.consume()
        }
    }

    private func consume() async {
        let request = NotificationsSubscribeRequest(group: configuration.group, types: configuration.types)
        var attempts = configuration.backoff.attempts()
        var failing = false
        var declared = false
        while !Task.isCancelled {
            do {
                if !declared {
                    _ = try await client.call(NotificationsContract.declareGroup, request)
                    declared = true
                }
                let subscription = try await client.subscribe(NotificationsContract.subscribe, request, credit: configuration.credit)
                for try await delivery in subscription {
                    if failing {
                        logger.info("event consumer receiving again", metadata: ["konto.group": "\(configuration.group)"])
                        failing = false
                    }
                    attempts.succeeded()
                    subscription.acknowledge(delivery, await outcome(of: delivery.event))
                }
            } catch {
                if Task.isCancelled { return }
                if !failing {
                    logger.warning("event consumer cannot subscribe; retrying", metadata: ["konto.group": "\(configuration.group)", "konto.error": "\(error)"])
                    failing = true
                }
            }
            try? await Task.sleep(for: attempts.failed())
        }
    }

    private func outcome(of event: AccountEvent) async -> WireAck.Disposition {
        do {
            try await handle(event)
            return .processed
        } catch let rejection as EventRejection {
            logger.warning("event rejected", metadata: ["konto.group": "\(configuration.group)", "konto.event_id": "\(event.id)"])
            return .reject(reason: rejection.reason)
        } catch {
            return .retry(reason: "\(error)")
        }
    }
}

/// Thrown by an ``EventConsumer``'s handler for an event it can never process.
public struct EventRejection: Error, Sendable {
    public var reason: String

    public init(_ reason: String) {
        self.reason = reason
    }
}

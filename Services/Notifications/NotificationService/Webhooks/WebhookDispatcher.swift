import AsyncHTTPClient
import Foundation
import KontoContracts
import KontoModel
import KontoRuntime
import KontoWire
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// Delivers events to the configured webhook endpoints as signed HTTP POSTs.
///
/// Each endpoint is a consumer group (`webhook:<name>`) served inside Notifications: its deliveries are claimed
/// like any consumer's (in order per account, a claim invisible to others until its visibility timeout), POSTed
/// with ``WebhookSignature``'s headers (Standard Webhooks 1.0), and settled by the answer: a 2xx acknowledges, anything else (another
/// status, a timeout, a refused connection) retries with back-off and ends in dead letter after the maximum
/// attempts, where `notifications.replayDeadLetters` can send it again. Every attempt goes into the endpoint's
/// delivery log. Redirects are not followed.
public struct WebhookDispatcher: Service {
    public struct Configuration: Sendable {
        public var endpoints: [WebhookEndpoint]
        /// The longest one POST may take.
        public var requestTimeout: Duration = .seconds(10)
        /// POSTs in flight per endpoint at most.
        public var concurrency = 4
        /// Opens reset tokens for the endpoints that deliver them (the deployment's secret's seal).
        public var resetTokenSeal: ResetTokenSeal?

        public init(endpoints: [WebhookEndpoint]) {
            self.endpoints = endpoints
        }
    }

    private let store: NotificationStore
    private let configuration: Configuration
    private let logger: Logger

    public init(store: NotificationStore, configuration: Configuration, logger: Logger) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
    }

    public func run() async throws {
        guard !configuration.endpoints.isEmpty else {
            // Nothing to deliver; a service that returned early would end its whole group.
            try? await gracefulShutdown()
            return
        }
        var httpConfiguration = HTTPClient.Configuration()
        httpConfiguration.redirectConfiguration = .disallow
        httpConfiguration.timeout = .init(connect: .seconds(5), read: .milliseconds(configuration.requestTimeout.milliseconds))
        let http = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: httpConfiguration)
        await withDiscardingTaskGroup { group in
            for endpoint in configuration.endpoints {
                group.addTask {
                    await cancelWhenGracefulShutdown {
                        await self.serve(endpoint, http: http)
                    }
                }
            }
        }
        try? await http.shutdown()
    }

    /// Delivers the endpoint's events until cancelled.
    private func serve(_ endpoint: WebhookEndpoint, http: HTTPClient) async {
        var logger = self.logger
        logger[metadataKey: "konto.webhook"] = "\(endpoint.name)"
        let options = store.options
        // Read once; NotificationServer refused the endpoint at start if any could not be read.
        let secrets = endpoint.signingSecrets
        // Declared before anything else, so events stored from now on are queued for the endpoint.
        while !Task.isCancelled {
            do {
                _ = try await store.declareGroup(NotificationsSubscribeRequest(group: endpoint.group, types: endpoint.types))
                break
            } catch {
                logger.warning("webhook group cannot be declared; retrying", metadata: ["konto.error": "\(error)"])
                try? await Task.sleep(for: options.pollInterval)
            }
        }
        while !Task.isCancelled {
            let generation = store.published.generation
            let now = store.clock()
            let claims: [ClaimedDelivery]
            do {
                // The visibility covers the POST's timeout, so no second claim races a slow endpoint.
                let visibility = max(options.visibilityTimeout, configuration.requestTimeout + .seconds(5))
                claims = try await store.storage.claim(group: endpoint.group, limit: configuration.concurrency, at: now, visibility: visibility, maxAttempts: options.maxAttempts)
            } catch {
                logger.warning("webhook deliveries cannot be claimed", metadata: ["konto.error": "\(error)"])
                try? await Task.sleep(for: options.pollInterval)
                continue
            }
            guard !claims.isEmpty else {
                let wait = (try? await store.idleWait(group: endpoint.group, now: now)) ?? options.pollInterval
                await store.published.wait(after: generation, timeout: wait)
                continue
            }
            // One claim per account at most (later ones wait for it), so these may go out in parallel.
            let deliveryLogger = logger
            await withDiscardingTaskGroup { group in
                for delivery in claims {
                    group.addTask {
                        await self.deliver(delivery, to: endpoint, secrets: secrets, http: http, logger: deliveryLogger)
                    }
                }
            }
        }
    }

    private func deliver(_ delivery: ClaimedDelivery, to endpoint: WebhookEndpoint, secrets: [WebhookSecret], http: HTTPClient, logger: Logger) async {
        let started = ContinuousClock.now
        var statusCode: Int?
        var failure: String?
        do {
            let body = try Self.body(for: delivery.event, to: endpoint, seal: configuration.resetTokenSeal)
            let timestamp = Int64(Date().timeIntervalSince1970)
            let id = delivery.event.id.uuidString
            var request = HTTPClientRequest(url: endpoint.url.absoluteString)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "User-Agent", value: "konto-notifications")
            request.headers.add(name: WebhookSignature.idHeader, value: id)
            request.headers.add(name: WebhookSignature.timestampHeader, value: "\(timestamp)")
            // One signature per secret: during a rotation receivers holding the old or the new one both verify.
            request.headers.add(name: WebhookSignature.signatureHeader, value: WebhookSignature.sign(secrets: secrets, id: id, timestamp: timestamp, body: body))
            request.body = .bytes(ByteBuffer(bytes: body))
            let response = try await http.execute(request, timeout: .milliseconds(configuration.requestTimeout.milliseconds))
            statusCode = Int(response.status.code)
            // The answer's body is not needed; read (at most 64 KiB of) it so the connection can be reused.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            if !(200..<300).contains(Int(response.status.code)) {
                failure = "HTTP \(response.status.code)"
            }
        } catch {
            failure = Self.describe(error)
        }
        let milliseconds = Int((ContinuousClock.now - started).milliseconds)
        let now = store.clock()
        let attempt = WebhookAttempt(endpoint: endpoint.name, eventId: delivery.event.id, attempt: delivery.attempts, statusCode: statusCode, error: failure, durationMilliseconds: milliseconds, at: now)
        do {
            try await store.storage.logWebhookAttempt(attempt)
            if let failure {
                let retryAt = now.adding(store.options.retryDelay(afterAttempts: delivery.attempts))
                let outcome = try await store.storage.retry(delivery.claim, reason: failure, retryAt: retryAt, maxAttempts: store.options.maxAttempts, at: now)
                logger.info("webhook delivery failed", metadata: ["konto.event_id": "\(delivery.event.id)", "konto.attempt": "\(delivery.attempts)", "konto.error": "\(failure)", "konto.outcome": "\(outcome)"])
            } else {
                _ = try await store.storage.acknowledge(delivery.claim)
            }
        } catch {
            // The claim times out and the event goes out again.
            logger.warning("webhook outcome not stored", metadata: ["konto.event_id": "\(delivery.event.id)", "konto.error": "\(error)"])
        }
    }

    /// A short reason for the log: what kind of failure, never a URL's credentials or a body.
    private static func describe(_ error: any Error) -> String {
        switch error {
        case let error as HTTPClientError:
            return "\(error)"
        case is CancellationError:
            return "cancelled"
        default:
            return "\(type(of: error))"
        }
    }
}

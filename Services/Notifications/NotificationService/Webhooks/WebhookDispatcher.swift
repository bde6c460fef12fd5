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
        // Read once; NotificationServer refused the endpoint at start if any could not be read.
        let secrets = endpoint.signingSecrets
        // The visibility covers the POST's timeout, so no second claim races a slow endpoint.
        let visibility = max(store.options.visibilityTimeout, configuration.requestTimeout + .seconds(5))
        let deliveryLogger = logger
        await store.work(group: endpoint.group, types: endpoint.types, concurrency: configuration.concurrency, visibility: visibility, logger: logger) { delivery in
            await self.deliver(delivery, to: endpoint, secrets: secrets, http: http, logger: deliveryLogger)
        }
    }

    private func deliver(_ delivery: ClaimedDelivery, to endpoint: WebhookEndpoint, secrets: [WebhookSecret], http: HTTPClient, logger: Logger) async -> DeliveryOutcome {
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
        let attempt = WebhookAttempt(endpoint: endpoint.name, eventId: delivery.event.id, attempt: delivery.attempts, statusCode: statusCode, error: failure, durationMilliseconds: milliseconds, at: store.clock())
        do {
            try await store.storage.logWebhookAttempt(attempt)
        } catch {
            logger.warning("webhook attempt not logged", metadata: ["konto.event_id": "\(delivery.event.id)", "konto.error": "\(error)"])
        }
        guard let failure else { return .delivered }
        logger.info("webhook delivery failed", metadata: ["konto.event_id": "\(delivery.event.id)", "konto.attempt": "\(delivery.attempts)", "konto.error": "\(failure)"])
        return .retry(failure)
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

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

/// Delivers events to the webhook endpoints as signed HTTP POSTs: the deployment's file's and those added through the
/// admin API, which it reads again every ``WebhookSettings/reloadInterval`` (at once for a change made through this
/// replica), starting and stopping endpoints as they come and go.
///
/// Each endpoint is a consumer group (`webhook:<name>`) served inside Notifications: its deliveries are claimed
/// like any consumer's (in order per account, a claim invisible to others until its visibility timeout), POSTed
/// with ``WebhookSignature``'s headers (Standard Webhooks 1.0), and settled by the answer: a 2xx acknowledges, anything else (another
/// status, a timeout, a refused connection) retries with back-off and ends in dead letter after the maximum
/// attempts, where `notifications.replayDeadLetters` can send it again. Every attempt goes into the endpoint's
/// delivery log. Redirects are not followed.
public struct WebhookDispatcher: Service {
    public struct Configuration: Sendable {
        /// The longest one POST may take.
        public var requestTimeout: Duration = .seconds(10)
        /// POSTs in flight per endpoint at most.
        public var concurrency = 4
        /// Opens reset tokens for the endpoints that deliver them (the deployment's secret's seal).
        public var resetTokenSeal: ResetTokenSeal?
        /// How an endpoint's host is resolved at delivery (``WebhookAddressPin``); tests give their own.
        var resolver: WebhookAddressPin.Resolver = .system

        public init() {}
    }

    private let store: NotificationStore
    private let configuration: Configuration
    private let logger: Logger

    public init(store: NotificationStore, configuration: Configuration, logger: Logger) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
    }

    private var httpConfiguration: HTTPClient.Configuration {
        var httpConfiguration = HTTPClient.Configuration()
        httpConfiguration.redirectConfiguration = .disallow
        httpConfiguration.timeout = .init(connect: .seconds(5), read: .milliseconds(configuration.requestTimeout.milliseconds))
        return httpConfiguration
    }

    public func run() async throws {
        let http = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: httpConfiguration)
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                // Each endpoint served, as last read, with what stops it.
                var running: [String: (endpoint: WebhookEndpoint, stop: AsyncStream<Void>.Continuation)] = [:]
                var reported: Set<String> = []
                while !Task.isCancelled {
                    let generation = store.webhookEndpointsChanged.generation
                    let endpoints: [WebhookEndpoint]
                    do {
                        endpoints = try await store.deliverableWebhookEndpoints { name, reason in
                            // Once per name and reason, not at every reload.
                            if reported.insert("\(name) \(reason)").inserted {
                                logger.error("webhook endpoint not served", metadata: ["konto.webhook": "\(name)", "konto.reason": "\(reason)"])
                            }
                        }
                    } catch {
                        // The file's are served whatever the storage says; the stored ones served go on until it answers.
                        logger.warning("webhook endpoints cannot be read", metadata: ["konto.error": "\(error)"])
                        endpoints = store.webhooks.fileEndpoints + running.values.map(\.endpoint).filter { $0.source == .api }
                    }
                    let wanted = Dictionary(endpoints.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
                    for (name, serving) in running where wanted[name] != serving.endpoint {
                        serving.stop.finish()
                        running[name] = nil
                        logger.info("webhook endpoint stopped", metadata: ["konto.webhook": "\(name)"])
                    }
                    for (name, endpoint) in wanted where running[name] == nil {
                        let (stopped, stop) = AsyncStream<Void>.makeStream()
                        running[name] = (endpoint, stop)
                        group.addTask {
                            await self.serve(endpoint, http: http, until: stopped)
                        }
                    }
                    await store.webhookEndpointsChanged.wait(after: generation, timeout: store.webhooks.reloadInterval)
                }
                for serving in running.values { serving.stop.finish() }
            }
        }
        try? await http.shutdown()
    }

    /// Delivers the endpoint's events until cancelled or `stopped` ends.
    private func serve(_ endpoint: WebhookEndpoint, http: HTTPClient, until stopped: AsyncStream<Void>) async {
        await withTaskGroup(of: Void.self) { race in
            race.addTask { await self.serve(endpoint, http: http) }
            race.addTask { for await _ in stopped {} }
            await race.next()
            race.cancelAll()
        }
    }

    /// Delivers the endpoint's events until cancelled.
    private func serve(_ endpoint: WebhookEndpoint, http: HTTPClient) async {
        var logger = self.logger
        logger[metadataKey: "konto.webhook"] = "\(endpoint.name)"
        // Read once; NotificationServer refused a file's endpoint at start if any could not be read, and the API's
        // are checked when added.
        let secrets = endpoint.signingSecrets
        // The visibility covers the POST's timeout, so no second claim races a slow endpoint.
        let visibility = max(store.options.visibilityTimeout, configuration.requestTimeout + .seconds(5))
        let deliveryLogger = logger
        // An endpoint an operator's key added goes only where its host resolves to a public address, decided at each
        // delivery (the deployment's own file may point inside).
        let pin = endpoint.source == .api && !store.webhooks.allowsLocalEndpoints && WebhookAddressPin.needsPin(endpoint.url)
            ? endpoint.url.host.map { WebhookAddressPin(host: $0, configuration: httpConfiguration, resolver: configuration.resolver) } : nil
        // An API's endpoint's group was made with it; declared here, a worker still running on a replica that has not
        // yet read its removal would bring the group back, to collect deliveries no one serves.
        await store.work(group: endpoint.group, types: endpoint.types, declares: endpoint.source == .file, concurrency: configuration.concurrency, visibility: visibility, logger: logger) { delivery in
            await self.deliver(delivery, to: endpoint, secrets: secrets, http: http, pin: pin, logger: deliveryLogger)
        }
        await pin?.shutdown()
    }

    private func deliver(
        _ delivery: ClaimedDelivery, to endpoint: WebhookEndpoint, secrets: [WebhookSecret], http: HTTPClient, pin: WebhookAddressPin?, logger: Logger
    ) async -> DeliveryOutcome {
        let started = ContinuousClock.now
        var statusCode: Int?
        var failure: String?
        var detail: String?
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
            var client = http
            if let pin {
                guard let pinned = await pin.client() else { throw Refused() }
                client = pinned
            }
            let response: HTTPClientResponse
            do {
                response = try await client.execute(request, timeout: .milliseconds(configuration.requestTimeout.milliseconds))
            } catch {
                throw NoAnswer(underlying: error)
            }
            statusCode = Int(response.status.code)
            // The answer's body is not needed; read (at most 64 KiB of) it so the connection can be reused.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            if !(200..<300).contains(Int(response.status.code)) {
                failure = "HTTP \(response.status.code)"
            }
        } catch is Refused {
            failure = WebhookAddressPin.refusal
        } catch let error as NoAnswer {
            // What is kept and shown to operators through the API is a coarse class: which way a connection failed
            // (refused, timed out, reset, TLS) would map the network behind a URL. The log keeps the detail.
            failure = error.underlying is CancellationError ? "cancelled" : Self.noAnswer
            detail = Self.describe(error.underlying)
        } catch {
            // Konto's own (the body could not be made): nothing of the network.
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
        logger.info("webhook delivery failed", metadata: [
            "konto.event_id": "\(delivery.event.id)", "konto.attempt": "\(delivery.attempts)", "konto.error": "\(detail ?? failure)",
        ])
        return .retry(failure)
    }

    /// A delivery that got no HTTP answer, whatever the reason.
    static let noAnswer = "no answer (connection failed, timed out or TLS failed)"

    /// The request was made but no answer came.
    private struct NoAnswer: Error {
        let underlying: any Error
    }

    /// Not sent: the host has no public address (``WebhookAddressPin``).
    private struct Refused: Error {}

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

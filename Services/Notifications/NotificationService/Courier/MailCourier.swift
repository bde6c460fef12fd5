import CoreMetrics
import Foundation
import KontoContracts
import KontoMail
import KontoModel
import Logging
import NIOCore
import ServiceLifecycle

/// Sends the mail `mailRequested` events ask for over SMTP: a channel beside the webhooks, on the same durable
/// machinery. The courier is the consumer group `mail`: each request is claimed (in order per account), rendered
/// (``MailComposer``) and sent (``SMTPClient``, whose sessions carry one mail after another, ``MailSettings/concurrency``
/// at once), and
/// settled by the server's answer: accepted is done; a 4xx, a failed connection or a timeout is retried with
/// back-off; a 5xx, or a request that can never make a mail, goes to the dead letters at once, where
/// `notifications.replayDeadLetters` (group `mail`) can send it again. Every attempt is logged, never the body.
public struct MailCourier: Service {
    /// The consumer group of the courier.
    public static let group = "mail"

    private let store: NotificationStore
    private let composer: MailComposer
    private let transport: any MailTransport
    /// How long one mail may take to send (the SMTP conversation's bound).
    private let sendTimeout: TimeAmount
    private let metrics: Metrics
    private let logger: Logger

    /// Mails sent, retried and dead-lettered (`konto_mail_sent_total`, `_retried_total`, `_dead_lettered_total`).
    struct Metrics: Sendable {
        let sent: Counter
        let retried: Counter
        let deadLettered: Counter

        init(factory: any MetricsFactory) {
            sent = Counter(label: "konto_mail_sent_total", factory: factory)
            retried = Counter(label: "konto_mail_retried_total", factory: factory)
            deadLettered = Counter(label: "konto_mail_dead_lettered_total", factory: factory)
        }
    }

    public init(store: NotificationStore, settings: MailSettings, seal: ResetTokenSeal, metricsFactory: any MetricsFactory = MetricsSystem.factory, logger: Logger) throws {
        self.store = store
        self.composer = MailComposer(settings: settings, seal: seal)
        var smtp = settings.smtp
        // As many idle sessions as mails go at once: each slot finds its own waiting.
        smtp.maximumIdleConnections = settings.concurrency
        self.transport = try settings.transport ?? SMTPClient(configuration: smtp)
        self.sendTimeout = smtp.timeout
        self.metrics = Metrics(factory: metricsFactory)
        var logger = logger
        logger[metadataKey: "konto.channel"] = "mail"
        self.logger = logger
    }

    public func run() async throws {
        // The claim outlasts the whole SMTP conversation, so no second claim races a slow server.
        let visibility = max(store.options.visibilityTimeout, .nanoseconds(sendTimeout.nanoseconds) * 2 + .seconds(5))
        let metrics = self.metrics
        await cancelWhenGracefulShutdown {
            await store.work(
                group: Self.group, types: ["mailRequested"], concurrency: composer.settings.concurrency,
                visibility: visibility, logger: logger,
                deliver: { delivery in await self.deliver(delivery) },
                settled: { _, settlement in
                    switch settlement {
                    case .delivered: metrics.sent.increment()
                    case .retried: metrics.retried.increment()
                    case .deadLettered: metrics.deadLettered.increment()
                    }
                }
            )
        }
        await transport.shutdown()
    }

    func deliver(_ delivery: ClaimedDelivery) async -> DeliveryOutcome {
        let event = delivery.event
        let metadata: Logger.Metadata = ["konto.event_id": "\(event.id)", "konto.account_id": "\(event.accountId)", "konto.attempt": "\(delivery.attempts)"]
        guard case let .mailRequested(request) = event.kind else {
            return .deadLetter("not a mail request")
        }
        if let expiresAt = request.expiresAt, expiresAt <= Date() {
            // Its link or code no longer works: a mail would only confuse.
            logger.warning("mail not sent: its secret expired before it could be", metadata: metadata.merging(["konto.message": "\(request.message)"]) { $1 })
            return .deadLetter("expired before it could be sent")
        }
        let started = ContinuousClock.now
        do throws(MailError) {
            let message = try composer.message(for: event, request)
            try await transport.send(message)
            logger.info("mail sent", metadata: metadata.merging(["konto.message": "\(request.message)", "konto.milliseconds": "\((ContinuousClock.now - started).milliseconds)"]) { $1 })
            return .delivered
        } catch {
            logger.warning("mail not sent", metadata: metadata.merging(["konto.message": "\(request.message)", "konto.error": "\(error)"]) { $1 })
            return error.isPermanent ? .deadLetter(error.description) : .retry(error.description)
        }
    }
}

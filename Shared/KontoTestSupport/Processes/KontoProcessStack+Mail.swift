import KontoContracts
import KontoModel
import KontoWire
import Logging

extension KontoProcessStack {
    /// The `number`th mail of `message` Identity asked the courier to send for `accountId`, read from Notifications'
    /// feed as the gateway does, with its secret (a link's token, a code) opened by the mail seal key as the courier
    /// would. Both keys derive from the stack's root, which only the test holds.
    public func mail(accountId: String, _ message: MailRequest.Message, number: Int = 1, logger: Logger) async throws -> (request: MailRequest, secret: String?) {
        let root = WireSecret(wireSecret)
        guard let port = environment["KONTO_NOTIFICATIONS_PORT"].flatMap(Int.init) else { throw KontoTestingError(.commandFailed, "no Notifications port") }
        let client = WireClient(
            configuration: .init(port: port, serviceName: WireAllowList.gateway, serverName: NotificationsContract.serviceName, secret: root), logger: logger
        )
        let seal = ResetTokenSeal(secret: WireSecret(DeploymentKeys(root: root).mailSealKey))
        return try await RunningServices.with([client], logger: logger) {
            let feed = try await client.subscribe(NotificationsContract.feed, NotificationsFeedRequest(accountId: accountId), credit: 16)
            defer { feed.cancel() }
            var seen = 0
            for try await delivery in feed {
                feed.acknowledge(delivery)
                guard case let .mailRequested(request) = delivery.event.kind, request.message == message else { continue }
                seen += 1
                if seen == number {
                    return (request, try request.sealedToken.map { try seal.open($0, accountId: accountId) })
                }
            }
            throw KontoTestingError(.commandFailed, "the feed ended without the mail")
        }
    }

    /// The code of the `number`th verification mail for `accountId` (beside its link), opened as the courier would.
    public func verificationCode(accountId: String, number: Int = 1, logger: Logger) async throws -> String {
        let (request, _) = try await mail(accountId: accountId, .verifyEmail, number: number, logger: logger)
        guard let sealed = request.sealedCode else { throw KontoTestingError(.commandFailed, "the verification mail carries no code") }
        return try ResetTokenSeal(secret: WireSecret(DeploymentKeys(root: WireSecret(wireSecret)).mailSealKey)).open(sealed, accountId: accountId)
    }
}

import KontoContracts
import KontoModel

extension IdentityStore {
    /// A `mailRequested` event for Notifications' courier, written in the same transaction as the change it tells of;
    /// nil when the account has no address to write to (its userId is a username, or it is anonymous). A secret is
    /// sealed for the courier, as a reset token for its deliverer.
    func mailEvent(
        _ accountId: String, to address: String?, _ message: MailRequest.Message, secret: String? = nil, expiresAt: Timestamp? = nil,
        values: [String: String] = [:], at now: Timestamp
    ) -> AccountEvent? {
        guard configuration.userIdType == .emailAddress, let address else { return nil }
        let request = MailRequest(
            message: message, to: address, sealedToken: secret.map { resetTokenSeal.seal($0, accountId: accountId) },
            expiresAt: expiresAt?.date, values: values
        )
        return event(accountId, .mailRequested(request), at: now)
    }

    /// The address the account's mail goes to: its userId when userIds are email addresses. A failed read sends no
    /// mail rather than failing the change (the change itself is what the caller asked for).
    func mailAddress(accountId: String) async -> String? {
        guard configuration.userIdType == .emailAddress else { return nil }
        return (try? await storage.credential(accountId: accountId))??.userId
    }
}

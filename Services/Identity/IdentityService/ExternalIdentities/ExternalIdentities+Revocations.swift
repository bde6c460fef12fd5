import KontoErrors
import KontoModel
import Logging

/// Revokes the provider tokens of deleted accounts and unlinked identities (Apple's `/auth/revoke`, which the App
/// Store requires at deletion; RFC 7009 elsewhere). The revocation is written in the deletion's own transaction, so
/// none is lost; the `provider-revocations` job (a ``PeriodicJob``) tries it until the provider confirms, backing off (5 s doubling to an hour), and gives it
/// up as dead after ``IdentityOptions/revocationAttempts`` (logged as an error, listed for the operator). Each
/// attempt is leased, so replicas never send one twice at once; a confirmed one is forgotten, with its token.
extension ExternalIdentities {
    /// One sweep over the due revocations; returns how many the providers confirmed.
    @discardableResult
    func runRevocations(limit: Int = 50) async -> Int {
        let now = clock()
        // Given up long enough ago: forgotten, token and accountId with them.
        if let pruned = try? await storage.pruneDeadRevocations(givenUpBefore: now.adding(.zero - options.deadRevocationRetention)), pruned > 0 {
            logger.warning("provider token revocations given up were forgotten after their retention", metadata: ["konto.count": "\(pruned)"])
        }
        let due: [StoredRevocation]
        do {
            due = try await storage.dueRevocations(at: now, leaseUntil: now.adding(.seconds(60)), limit: limit)
        } catch {
            return 0
        }
        var revoked = 0
        for revocation in due {
            let metadata: Logger.Metadata = ["konto.account_id": "\(revocation.accountId)", "konto.provider": "\(revocation.provider)"]
            guard let provider = providers.providers[revocation.provider],
                  let token = providerTokens.open(revocation.sealedToken, accountId: revocation.accountId, identityId: revocation.identityId)
            else {
                // A provider no longer configured, or a token sealed under another secret: nothing can be sent.
                logger.error("provider token revocation given up: provider not configured or token unreadable", metadata: metadata)
                try? await storage.failRevocation(id: revocation.id, attempts: revocation.attempts + 1, retryAt: nil, at: now)
                continue
            }
            do {
                _ = try await providers.revoke(token.token, provider: provider, clientId: token.clientId)
                try? await storage.finishRevocation(id: revocation.id)
                revoked += 1
                logger.info("provider token revoked", metadata: metadata)
            } catch {
                let attempts = revocation.attempts + 1
                if attempts >= options.revocationAttempts {
                    logger.error("provider token revocation given up", metadata: metadata.merging(["konto.attempts": "\(attempts)", "konto.error": "\(error)"]) { $1 })
                    try? await storage.failRevocation(id: revocation.id, attempts: attempts, retryAt: nil, at: clock())
                } else {
                    let delay = Backoff(initial: options.revocationBackoff, maximum: .seconds(3_600), jitter: .equal).delay(afterFailures: attempts)
                    logger.warning("provider token revocation failed; will retry", metadata: metadata.merging(["konto.attempts": "\(attempts)", "konto.error": "\(error)"]) { $1 })
                    try? await storage.failRevocation(id: revocation.id, attempts: attempts, retryAt: clock().adding(delay), at: clock())
                }
            }
        }
        return revoked
    }
}

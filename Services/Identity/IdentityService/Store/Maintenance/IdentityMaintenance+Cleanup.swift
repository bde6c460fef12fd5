import KontoModel
import Logging

/// Identity's clean-ups, run by its periodic jobs (IdentityServer): the profiles that failed sign-ups and deletions
/// left behind, sign-ups whose process died between reserving the userId and activating the account, failed-login
/// counts out of every window; less often, expired sessions and reset tokens and anonymous accounts that lost their
/// last session.
extension IdentityMaintenance {
    /// One sweep: stale reservations first (their profiles join the clean-ups), failure counts out of their window and
    /// clients no longer known, then every due clean-up.
    /// Returns how many profiles were cleaned up.
    @discardableResult
    func runCleanups(limit: Int = 100) async -> Int {
        let now = clock()
        do {
            let cutoff = now.adding(.zero - options.staleReservationAge)
            let abandoned = try await storage.abandonStaleReservations(before: cutoff, profileCleanupAt: now.adding(options.profileCleanupDelay))
            if abandoned > 0 {
                logger.warning("stale sign-up reservations abandoned", metadata: ["konto.count": "\(abandoned)"])
            }
            _ = try await storage.pruneFailures(before: now.adding(.zero - options.throttle.window))
            _ = try await storage.pruneKnownClients(before: now.adding(.zero - options.knownClientAge))
            var cleaned = 0
            for accountId in try await storage.dueProfileCleanups(at: now, limit: limit) {
                do {
                    _ = try await profile.delete(accountId: accountId)
                    try await storage.finishProfileCleanup(accountId: accountId)
                    cleaned += 1
                } catch {
                    try await storage.postponeProfileCleanup(accountId: accountId, until: now.adding(options.profileCleanupDelay))
                }
            }
            return cleaned
        } catch {
            logger.warning("profile clean-up sweep failed", metadata: ["konto.error": "\(error)"])
            return 0
        }
    }

    /// Deletes expired sessions and reset tokens, and anonymous accounts no one can sign in to any more (each with a
    /// `deletingAccount` event, so consumers forget what they keep for it), in bounded batches until none is left.
    @discardableResult
    func pruneExpired(limit: Int = 500) async -> PrunedRecords {
        let now = clock()
        var total = PrunedRecords()
        do {
            while true {
                let pruned = try await storage.pruneExpired(at: now, profileCleanupAt: now.adding(options.profileCleanupDelay), limit: limit) { accountId in
                    [self.event(accountId, .deletingAccount, at: now)]
                }
                total.sessions += pruned.sessions
                total.resetTokens += pruned.resetTokens
                total.anonymousAccounts += pruned.anonymousAccounts
                guard pruned.sessions == limit || pruned.resetTokens == limit || pruned.anonymousAccounts == limit else { break }
            }
        } catch {
            logger.warning("expired records not pruned", metadata: ["konto.error": "\(error)"])
        }
        if total != PrunedRecords() {
            logger.info("expired records pruned", metadata: [
                "konto.sessions": "\(total.sessions)", "konto.reset_tokens": "\(total.resetTokens)", "konto.anonymous_accounts": "\(total.anonymousAccounts)",
            ])
        }
        return total
    }
}

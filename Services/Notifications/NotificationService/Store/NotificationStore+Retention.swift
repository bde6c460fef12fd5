import KontoModel
import Logging

/// Erases deleted accounts' events and prunes events past retention, on a schedule. Runs in every replica; both
/// steps are idempotent and claim their rows with `SKIP LOCKED`, so replicas sweeping at once share the work.
extension NotificationStore {
    /// One sweep: erasures that are due, then events past retention, each in bounded batches until none is left.
    /// Returns how many accounts were erased and how many events pruned.
    @discardableResult
    public func sweep(batch: Int = 500) async -> (erased: Int, pruned: Int) {
        let now = clock()
        var (erased, pruned) = (0, 0)
        do {
            while true {
                let count = try await storage.eraseDeletedAccounts(graceCutoff: now.adding(.zero - options.erasureGrace), limit: batch, at: now)
                erased += count
                guard count == batch else { break }
            }
            while true {
                let count = try await storage.prune(before: now.adding(.zero - options.retention), limit: batch)
                pruned += count
                guard count == batch else { break }
            }
        } catch {
            logger.warning("event retention sweep failed", metadata: ["konto.error": "\(error)"])
        }
        if erased > 0 || pruned > 0 {
            logger.info("deleted accounts erased and old events pruned", metadata: ["konto.erased": "\(erased)", "konto.pruned": "\(pruned)"])
        }
        return (erased, pruned)
    }
}

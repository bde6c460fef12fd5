import Foundation
import KontoContracts
import KontoModel
import Logging
import Synchronization

/// The audit log's part (docs/ADMIN.md, "Audit log"): the entries of every admin call, the operators' reads of the
/// log, the chain's sealing and verification, and retention. The entries of changes are written by the storage with
/// their events (``AuditRecord/records(for:scope:)``).
struct AuditTrail: IdentityPart {
    let context: IdentityContext
    let storage: any IdentityStorage
    let operators: Operators
    /// Where the head is published beside the log (``IdentityMetrics``).
    let metrics: IdentityMetrics
    /// When the head was last written to the log (``publishHead(at:)``).
    let headLogged = HeadLogged()

    final class HeadLogged: Sendable {
        let last = Mutex<(at: Timestamp, position: Int64)?>(nil)
    }

    /// Entries sealed per transaction.
    static let sealBatch = 1_000

    /// Seals every entry committed so far. Returns how many.
    @discardableResult
    func sealAll() async throws(IdentityStorageError) -> Int {
        var total = 0
        while true {
            let sealed = try await storage.sealAudit(limit: Self.sealBatch)
            total += sealed
            if sealed < Self.sealBatch { return total }
        }
    }

    /// The periodic job: seals, removes what is older than the retention (``IdentityOptions/auditRetention``), and
    /// publishes the head.
    func maintain() async {
        do {
            try await sealAll()
            if let retention = options.auditRetention {
                let cutoff = clock().adding(.zero - retention)
                var removed = 0
                while true {
                    let pruned = try await storage.pruneAudit(before: cutoff, limit: 10_000)
                    removed += pruned
                    if pruned < 10_000 { break }
                }
                if removed > 0 { logger.info("audit entries past their retention removed", metadata: ["konto.count": "\(removed)"]) }
            }
            try await publishHead(at: clock())
        } catch {
            logger.warning("audit log not sealed", metadata: ["konto.error": "\(error)"])
        }
    }

    /// Writes the chain's head (position and hash) to the metrics (``IdentityMetrics``) on every pass (one row read),
    /// and to the log at notice level every ``IdentityOptions/auditHeadLogInterval`` when it moved: copies outside the
    /// database, so a writer who rewrites the log and recomputes every hash is found out by comparing (docs/ADMIN.md,
    /// "Tamper evidence"). Each replica writes its own; any one is enough.
    func publishHead(at now: Timestamp) async throws(IdentityStorageError) {
        let state = try await storage.auditChainState()
        let due = headLogged.last.withLock { last in last.map { !(now < $0.at.adding(options.auditHeadLogInterval)) } ?? true }
        metrics.recordAuditHead(position: state.headPosition, hash: state.headHash, anchorPosition: state.anchorPosition)
        guard due else { return }
        let moved = headLogged.last.withLock { last in
            defer { last = (now, state.headPosition) }
            return last?.position != state.headPosition
        }
        guard moved else { return }
        logger.notice("audit chain head", metadata: [
            "konto.audit_head_position": "\(state.headPosition)", "konto.audit_head_hash": "\(AuditChain.hex(state.headHash))",
            "konto.audit_anchor_position": "\(state.anchorPosition)",
        ])
    }

    // MARK: Operators' calls

    /// Records an admin call (its method, target, outcome and the key that made it) after it ran. A read answers only
    /// once its entry is written (`answered` false for a change: its entries are in its own transaction already, and
    /// a failure here is logged, not answered, since the change happened).
    func recordAdminCall(
        accountId: String?, facts: [String: String], outcome: String, scope: AuditScope, mustLand: Bool
    ) async throws(ServiceError) {
        var allFacts = facts.merging(scope.notedFacts) { given, _ in given }
        allFacts["outcome"] = outcome
        let key = scope.operatorKeyId
        let record = AuditRecord(
            occurredAt: clock(), accountId: accountId, actorType: key == nil ? .anonymous : .operator, actorId: key, type: "admin." + scope.operation,
            operation: scope.operation, facts: allFacts, personal: scope.personal
        )
        do {
            try await storage.appendAudit([record])
        } catch {
            logger.error("admin call not audited", metadata: ["konto.operation": "\(scope.operation)", "konto.error": "\(error.code)"])
            if mustLand { throw Self.error(for: error) }
        }
    }

    func auditEntries(_ request: IdentityAuditQueryRequest) async throws(ServiceError) -> IdentityAuditPage {
        _ = try await operators.authorize(request.operatorCall, scope: .auditRead)
        let limit = request.limit ?? 100
        guard (1...IdentityAuditQueryRequest.maximumLimit).contains(limit) else {
            throw Operators.invalid("The limit is 1 to \(IdentityAuditQueryRequest.maximumLimit).")
        }
        for text in [request.accountId, request.actorId, request.type].compactMap({ $0 }) {
            guard (1...IdentityAuditQueryRequest.maximumTextLength).contains(text.count), !text.unicodeScalars.contains("\u{0}") else {
                throw Operators.invalid("A filter has 1 to \(IdentityAuditQueryRequest.maximumTextLength) characters and no NUL.")
            }
        }
        var before: Int64?
        if let cursor = request.cursor {
            guard cursor.utf8.count <= 19, cursor.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let sequence = Int64(cursor), sequence > 0 else {
                throw Operators.invalid("The cursor is not one Konto gave.")
            }
            before = sequence
        }
        let query = AuditQuery(
            accountId: request.accountId, actorId: request.actorId, type: request.type, occurredAfter: request.occurredAfter,
            occurredBefore: request.occurredBefore, beforeSequence: before, limit: limit
        )
        let entries = try await stored { () async throws(IdentityStorageError) in
            // What is listed is sealed first, so every entry shown has its place in the chain.
            try await sealAll()
            return try await storage.auditEntries(query)
        }
        let next = entries.count == limit ? entries.last.map { "\($0.sequence)" } : nil
        return IdentityAuditPage(entries: entries.map(\.listed), nextCursor: next)
    }

    func verifyAudit(_ request: IdentityAuditVerifyRequest) async throws(ServiceError) -> IdentityAuditVerification {
        _ = try await operators.authorize(request.operatorCall, scope: .auditRead)
        return try await stored { () async throws(IdentityStorageError) in
            try await sealAll()
            return try await verify()
        }
    }

    /// Walks the chain from its anchor to its head: every position there, each entry's hash recomputed, each personal
    /// text matching its digest, the head where the chain row says. Retention moving the anchor meanwhile starts it
    /// again.
    func verify() async throws(IdentityStorageError) -> IdentityAuditVerification {
        var attempt = 0
        while true {
            attempt += 1
            let state = try await storage.auditChainState()
            let result = try await verify(from: state)
            if result.intact || attempt == 3 { return result }
            let now = try await storage.auditChainState()
            if now.anchorPosition == state.anchorPosition { return result }
        }
    }

    private func verify(from state: AuditChainState) async throws(IdentityStorageError) -> IdentityAuditVerification {
        var previous = state.anchorHash
        var expected = state.anchorPosition + 1
        var checked: Int64 = 0
        func broken(_ position: Int64, _ problem: String) -> IdentityAuditVerification {
            IdentityAuditVerification(
                intact: false, entriesChecked: checked, anchorPosition: state.anchorPosition, headPosition: state.headPosition,
                headHash: AuditChain.hex(state.headHash), brokenAt: position, problem: problem
            )
        }
        while expected <= state.headPosition {
            let page = try await storage.auditChain(after: expected - 1, limit: Int(min(Int64(Self.sealBatch), state.headPosition - expected + 1)))
            guard !page.isEmpty else { return broken(expected, "The entries from here to the head are missing.") }
            for entry in page {
                guard entry.position == expected else { return broken(expected, "The entry at this position is missing.") }
                if entry.malformed { return broken(expected, "The entry was changed.") }
                if let personal = entry.record.personalText, AuditRecord.digest(personal) != entry.record.personalDigest {
                    return broken(expected, "The entry's personal data was changed.")
                }
                let hash = AuditChain.link(previous: previous, position: expected, record: entry.record)
                guard hash == entry.hash else { return broken(expected, "The entry was changed.") }
                previous = hash
                expected += 1
                checked += 1
            }
        }
        guard previous == state.headHash else { return broken(state.headPosition, "The head's hash does not match the chain.") }
        // Retention removes only what is older than it: a chain starting after a younger entry lost entries to
        // someone else (who moved the anchor to hide it), unless the retention was lengthened since.
        if let retention = options.auditRetention, let anchorAt = state.anchorOccurredAt, !(anchorAt < clock().adding(.zero - retention)) {
            return broken(
                state.anchorPosition,
                "The chain starts after an entry of \(anchorAt), younger than the retention period: entries were removed before their time (or the retention was lengthened since)."
            )
        }
        return IdentityAuditVerification(
            intact: true, entriesChecked: checked, anchorPosition: state.anchorPosition, headPosition: state.headPosition,
            headHash: AuditChain.hex(state.headHash)
        )
    }
}

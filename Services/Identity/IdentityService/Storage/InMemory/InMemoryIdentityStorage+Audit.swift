import KontoModel
import Synchronization

extension InMemoryIdentityStorage {
    public func appendAudit(_ records: [AuditRecord]) {
        state.withLock { $0.appendAudit(records) }
    }

    public func appendAudit(_ records: [AuditRecord], whileAccountExists accountId: String) -> Bool {
        state.withLock { state in
            guard state.active(accountId) != nil else { return false }
            state.appendAudit(records)
            return true
        }
    }

    public func sealAudit(limit: Int) -> Int {
        state.withLock { state in
            var sealed = 0
            for index in state.audit.indices where state.audit[index].position == nil && sealed < limit {
                let position = state.auditChain.headPosition + 1
                let hash = AuditChain.link(previous: state.auditChain.headHash, position: position, record: state.audit[index].record)
                state.audit[index].position = position
                state.audit[index].hash = hash
                state.auditChain.headPosition = position
                state.auditChain.headHash = hash
                sealed += 1
            }
            return sealed
        }
    }

    public func auditChainState() -> AuditChainState {
        state.withLock { $0.auditChain }
    }

    public func auditChain(after position: Int64, limit: Int) -> [StoredAuditEntry] {
        state.withLock { state in
            Array(state.audit.filter { ($0.position ?? 0) > position }.sorted { ($0.position ?? 0) < ($1.position ?? 0) }.prefix(limit))
        }
    }

    public func auditEntries(_ query: AuditQuery) -> [StoredAuditEntry] {
        state.withLock { state in
            Array(state.audit.reversed().filter { entry in
                let record = entry.record
                return (query.accountId.map { record.accountId == $0 } ?? true)
                    && (query.actorId.map { record.actorId == $0 } ?? true)
                    && (query.type.map { record.type == $0 } ?? true)
                    && (query.occurredAfter.map { record.occurredAt >= $0 } ?? true)
                    && (query.occurredBefore.map { record.occurredAt < $0 } ?? true)
                    && (query.beforeSequence.map { entry.sequence < $0 } ?? true)
            }.prefix(query.limit))
        }
    }

    public func pruneAudit(before cutoff: Timestamp, limit: Int) -> Int {
        state.withLock { state in
            let chain = state.audit.filter { ($0.position ?? 0) > state.auditChain.anchorPosition }.sorted { ($0.position ?? 0) < ($1.position ?? 0) }
            let removed = Array(chain.prefix(limit).prefix { $0.record.occurredAt < cutoff })
            guard let last = removed.last, let position = last.position, let hash = last.hash else { return 0 }
            let sequences = Set(removed.map(\.sequence))
            state.audit.removeAll { sequences.contains($0.sequence) }
            state.auditChain.anchorPosition = position
            state.auditChain.anchorHash = hash
            state.auditChain.anchorOccurredAt = last.record.occurredAt
            return removed.count
        }
    }
}

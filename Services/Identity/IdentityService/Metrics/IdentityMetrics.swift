import Prometheus

/// Identity's metrics in its own Prometheus registry (not the process-wide one: the dev stack and tests run several
/// services in one process), served at `GET /metrics` where `KONTO_IDENTITY_METRICS_PORT` is set.
///
/// The audit chain's head, as the log line "audit chain head" carries it (docs/ADMIN.md, "Tamper evidence"): a
/// scraper keeps a copy of it outside the database, so a writer who deletes or rewrites entries and recomputes every
/// hash is found out by comparing the chain with the recorded series.
public final class IdentityMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    /// The position of the newest sealed entry (`konto_audit_chain_head_position`).
    let auditHeadPosition: Gauge
    /// The first 48 bits of its hash as a number (`konto_audit_chain_head_fingerprint`): a gauge's value is a double,
    /// exact to 53 bits; the log line carries the whole hash. 0 before any entry is sealed.
    let auditHeadFingerprint: Gauge
    /// The position the chain starts at after retention removed older entries (`konto_audit_chain_anchor_position`).
    let auditAnchorPosition: Gauge

    public init() {
        auditHeadPosition = registry.makeGauge(name: "konto_audit_chain_head_position", help: "Position of the audit chain's newest sealed entry.")
        auditHeadFingerprint = registry.makeGauge(
            name: "konto_audit_chain_head_fingerprint", help: "First 48 bits of the audit chain head's hash, as an integer."
        )
        auditAnchorPosition = registry.makeGauge(name: "konto_audit_chain_anchor_position", help: "Position the audit chain is anchored at.")
    }

    /// Records the chain's head as read from the database.
    func recordAuditHead(position: Int64, hash: [UInt8], anchorPosition: Int64) {
        auditHeadPosition.set(Double(position))
        auditHeadFingerprint.set(Double(Self.fingerprint(hash)))
        auditAnchorPosition.set(Double(anchorPosition))
    }

    /// The first six bytes of `hash`, big-endian: the first 12 hex digits of the logged hash.
    static func fingerprint(_ hash: [UInt8]) -> Int64 {
        hash.prefix(6).reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }

    /// The Prometheus text exposition of every metric.
    public func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }
}

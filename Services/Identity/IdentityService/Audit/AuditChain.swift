import Crypto
import Foundation
import KontoContracts
import KontoModel

/// The audit log's hash chain (docs/ADMIN.md, "Tamper evidence"): each sealed entry's hash covers the previous one's
/// and every field of the entry but its personal data, of which it covers the salted digest (so an erasure keeps the
/// chain whole). Entries are sealed in the order they are found committed, one sealer at a time, so appends never
/// wait for the chain: a sign-in's transaction only inserts its row.
enum AuditChain {
    /// The hash before the first entry.
    static let genesis = [UInt8](repeating: 0, count: 32)

    /// The hash of `record` sealed at `position` after `previous`. Every field is length-prefixed, so no two different
    /// entries hash the same input.
    static func link(previous: [UInt8], position: Int64, record: AuditRecord) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: previous)
        func field(_ text: String?) {
            let bytes = Array((text ?? "").utf8)
            // 0xFFFFFFFF marks nil, apart from an empty text.
            let length: UInt32 = text == nil ? .max : UInt32(bytes.count)
            withUnsafeBytes(of: length.bigEndian) { hasher.update(bufferPointer: $0) }
            hasher.update(data: bytes)
        }
        field("\(position)")
        field(record.id.uuidString.lowercased())
        field("\(record.occurredAt.milliseconds)")
        field(record.accountId)
        field(record.actorType.rawValue)
        field(record.actorId)
        field(record.type)
        field(record.operation)
        field(record.factsText)
        field(record.personalDigest.map { String(format: "%02x", $0) }.joined())
        return Array(hasher.finalize())
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}

/// The chain's two ends: the anchor (the last entry removed by retention, or the genesis) and the head (the last
/// entry sealed).
public struct AuditChainState: Sendable, Equatable {
    public var anchorPosition: Int64
    public var anchorHash: [UInt8]
    public var headPosition: Int64
    public var headHash: [UInt8]
    /// When the anchor (the last entry retention removed) was written; nil before any was removed (or removed before
    /// this was kept).
    public var anchorOccurredAt: Timestamp?

    public init(anchorPosition: Int64, anchorHash: [UInt8], headPosition: Int64, headHash: [UInt8], anchorOccurredAt: Timestamp? = nil) {
        self.anchorPosition = anchorPosition
        self.anchorHash = anchorHash
        self.headPosition = headPosition
        self.headHash = headHash
        self.anchorOccurredAt = anchorOccurredAt
    }

    public static let empty = AuditChainState(anchorPosition: 0, anchorHash: AuditChain.genesis, headPosition: 0, headHash: AuditChain.genesis)
}

/// An audit query as the storage runs it: every filter given must hold; newest first by insertion.
public struct AuditQuery: Sendable, Equatable {
    public var accountId: String?
    public var actorId: String?
    public var type: String?
    public var occurredAfter: Timestamp?
    public var occurredBefore: Timestamp?
    /// The previous page's last entry's sequence: this page has older ones.
    public var beforeSequence: Int64?
    public var limit: Int

    public init(
        accountId: String? = nil, actorId: String? = nil, type: String? = nil, occurredAfter: Timestamp? = nil, occurredBefore: Timestamp? = nil,
        beforeSequence: Int64? = nil, limit: Int
    ) {
        self.accountId = accountId
        self.actorId = actorId
        self.type = type
        self.occurredAfter = occurredAfter
        self.occurredBefore = occurredBefore
        self.beforeSequence = beforeSequence
        self.limit = limit
    }
}

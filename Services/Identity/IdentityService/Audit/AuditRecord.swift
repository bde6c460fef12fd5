import Crypto
import Foundation
import KontoContracts
import KontoModel

/// An audit entry as it is appended (docs/ADMIN.md, "Audit log"), in the forms the hash chain covers: the facts and
/// the personal data as JSON text with sorted keys. The personal text carries a random salt, so the digest the chain
/// keeps after an erasure tells nothing about what was erased (a plain hash of an address is reversed in seconds).
public struct AuditRecord: Sendable, Equatable {
    public var id: UUID
    public var occurredAt: Timestamp
    public var accountId: String?
    public var actorType: AuditActorType
    public var actorId: String?
    public var type: String
    public var operation: String?
    /// Never personal.
    public var factsText: String
    /// Nil when there is none (or, stored, once erased).
    public var personalText: String?
    /// SHA-256 of ``personalText``; empty when there was none. Kept through an erasure: the chain covers it.
    public var personalDigest: [UInt8]

    /// The salt's key in the personal text (not a key any personal datum uses).
    static let saltKey = "_salt"

    public init(
        id: UUID = UUID(), occurredAt: Timestamp, accountId: String?, actorType: AuditActorType, actorId: String?, type: String, operation: String?,
        facts: [String: String] = [:], personal: [String: String]? = nil
    ) {
        self.id = id
        self.occurredAt = occurredAt
        // Empty is stored as nil (the chain hashes what is stored).
        self.accountId = accountId.flatMap { $0.isEmpty ? nil : $0 }
        self.actorType = actorType
        self.actorId = actorId.flatMap { $0.isEmpty ? nil : $0 }
        self.type = type
        self.operation = operation.flatMap { $0.isEmpty ? nil : $0 }
        self.factsText = Self.json(facts)
        if var personal, !personal.isEmpty {
            var generator = SystemRandomNumberGenerator()
            personal[Self.saltKey] = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
            let text = Self.json(personal)
            self.personalText = text
            self.personalDigest = Self.digest(text)
        } else {
            self.personalText = nil
            self.personalDigest = []
        }
    }

    /// Stored forms as they are (a storage reading a row back).
    public init(
        id: UUID, occurredAt: Timestamp, accountId: String?, actorType: AuditActorType, actorId: String?, type: String, operation: String?,
        factsText: String, personalText: String?, personalDigest: [UInt8]
    ) {
        self.id = id
        self.occurredAt = occurredAt
        self.accountId = accountId
        self.actorType = actorType
        self.actorId = actorId
        self.type = type
        self.operation = operation
        self.factsText = factsText
        self.personalText = personalText
        self.personalDigest = personalDigest
    }

    static func digest(_ text: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(text.utf8)))
    }

    static func json(_ values: [String: String]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // A dictionary of strings always encodes.
        return (try? encoder.encode(values)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    static func dictionary(_ text: String?) -> [String: String]? {
        guard let text else { return nil }
        return try? JSONDecoder().decode([String: String].self, from: Data(text.utf8))
    }
}

/// An audit entry as stored: the record, its insertion order and, once sealed, its place and hash in the chain.
public struct StoredAuditEntry: Sendable, Equatable {
    /// Insertion order (a cursor for listing; not the chain's order, which is the order of sealing).
    public var sequence: Int64
    public var record: AuditRecord
    public var position: Int64?
    public var hash: [UInt8]?
    /// The stored row does not read as an entry (an actor type no entry has): changed behind Identity's back.
    public var malformed: Bool

    public init(sequence: Int64, record: AuditRecord, position: Int64? = nil, hash: [UInt8]? = nil, malformed: Bool = false) {
        self.sequence = sequence
        self.record = record
        self.position = position
        self.hash = hash
        self.malformed = malformed
    }

    /// As an operator reads it: the facts and personal data decoded, the salt left out.
    public var listed: IdentityAuditEntry {
        var personal = AuditRecord.dictionary(record.personalText)
        personal?[AuditRecord.saltKey] = nil
        return IdentityAuditEntry(
            id: record.id, position: position, occurredAt: record.occurredAt, accountId: record.accountId, actorType: record.actorType,
            actorId: record.actorId, type: record.type, operation: record.operation, facts: AuditRecord.dictionary(record.factsText) ?? [:],
            personal: personal, erased: record.personalText == nil && !record.personalDigest.isEmpty
        )
    }
}

import ArgumentParser
import Foundation
import KontoContracts
import KontoModel
import NIOCore

/// Whether Konto's second JSON codec pays: a profile record (every `profile.load`, `create` and `modify` answers with
/// one) through the direct reader and writer the wire uses (`WireJSONCodable`) against Foundation's coders, as the
/// wire would use them (a fresh coder per payload), in the same run. The record is a typical account's: a dozen keys,
/// a nested name, a list.
struct CodecBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codec",
        abstract: "A profile record's wire JSON, encoded and decoded: the direct codec vs Foundation's coders (µs per record)."
    )

    @Option(help: "Records encoded and decoded per run.") var iterations: Int = 50_000
    @Option(help: "Runs of each codec; the median is reported.") var runs: Int = 5

    static let record = ProfileRecord(
        accountId: "6f9619ff-8b86-d011-b42d-00c04fc964ff",
        details: AccountDetails(values: [
            "accountId": .string("6f9619ff-8b86-d011-b42d-00c04fc964ff"),
            "email": .string("ada.lovelace@example.org"),
            "name": .object(["givenName": .string("Ada"), "familyName": .string("Lovelace"), "middleName": .string("Augusta")]),
            "dateOfBirth": .string("1815-12-10"),
            "genderIdentity": .string("female"),
            "handle": .string("ada"),
            "biography": .string("Wrote the first algorithm intended for a machine, \"Note G\", in 1843."),
            "newsletter": .bool(true),
            "height": .double(1.65),
            "loginCount": .integer(1_843),
            "interests": .array([.string("mathematics"), .string("poetry"), .string("engines")]),
            "plan": .string("pro"),
        ]),
        version: 42
    )

    func validate() throws {
        guard (1_000...10_000_000).contains(iterations), (1...21).contains(runs) else {
            throw ValidationError("iterations 1000...10000000, runs 1...21")
        }
    }

    func run() throws {
        let record = Self.record
        // Both codecs must read what the other writes, and agree on the record.
        var direct: [UInt8] = []
        try record.writeWireJSON(into: &direct)
        let foundation = try JSONEncoder().encode(record)
        guard try ProfileRecord(wireJSON: ByteBuffer(bytes: foundation).readableBytesView) == record,
              try JSONDecoder().decode(ProfileRecord.self, from: Data(direct)) == record
        else {
            throw ValidationError("the two codecs disagree on the record")
        }

        let directMicros = try Self.median(runs: runs) {
            try Self.time(iterations) {
                var bytes: [UInt8] = []
                bytes.reserveCapacity(256)
                try record.writeWireJSON(into: &bytes)
                let decoded = try ProfileRecord(wireJSON: ByteBuffer(bytes: bytes).readableBytesView)
                precondition(decoded.version == record.version)
            }
        }
        let foundationMicros = try Self.median(runs: runs) {
            try Self.time(iterations) {
                let data = try JSONEncoder().encode(record)
                let decoded = try JSONDecoder().decode(ProfileRecord.self, from: data)
                precondition(decoded.version == record.version)
            }
        }
        let (sessionDirect, sessionFoundation) = try Self.sessionInfo(iterations: iterations, runs: runs)
        let ratio = foundationMicros / directMicros
        print(String(format: "  direct codec: %.2f µs per record (encode + decode), %d bytes", directMicros, direct.count))
        print(String(format: "  Foundation's coders: %.2f µs per record (encode + decode), %d bytes", foundationMicros, foundation.count))
        // At the 30k loads/s konto-bench profile reaches, each µs per record is 3 % of a core on each side of the wire.
        print(String(format: "  a session check's answer: direct %.2f µs, Foundation's coders %.2f µs (encode + decode)", sessionDirect, sessionFoundation))
        print(String(format: "konto-bench codec: ratio=%.2f target=2.0 direct_us=%.2f foundation_us=%.2f saved_core_share_at_30k_per_s=%.2f session_direct_us=%.2f session_foundation_us=%.2f iterations=%d runs=%d",
                     ratio, directMicros, foundationMicros, (foundationMicros - directMicros) * 30_000 / 1_000_000, sessionDirect, sessionFoundation, iterations, runs))
    }

    /// The answer to `identity.validateSession` (every uncached read checks its session once): µs per answer
    /// encoded and decoded, direct and through Foundation's coders.
    static func sessionInfo(iterations: Int, runs: Int) throws -> (direct: Double, foundation: Double) {
        let info = IdentitySessionInfo(
            account: IdentityAccountFacts(
                accountId: "6f9619ff-8b86-d011-b42d-00c04fc964ff", userId: "ada.lovelace@example.org", isAnonymous: false,
                emailVerified: true, createdAt: Timestamp(milliseconds: 1_764_000_000_123)
            ),
            sessionId: "0b7c4b2e-3f7a-4c1e-9d2a-5e6f7a8b9c0d", expiresAt: Timestamp(milliseconds: 1_766_592_000_456),
            privilegedUntil: Timestamp(milliseconds: 1_764_000_300_789), assuranceLevel: 1
        )
        var written: [UInt8] = []
        try info.writeWireJSON(into: &written)
        guard try IdentitySessionInfo(wireJSON: ByteBuffer(bytes: try JSONEncoder().encode(info)).readableBytesView) == info,
              try JSONDecoder().decode(IdentitySessionInfo.self, from: Data(written)) == info
        else {
            throw ValidationError("the two codecs disagree on the session check's answer")
        }
        let direct = try median(runs: runs) {
            try time(iterations) {
                var bytes: [UInt8] = []
                bytes.reserveCapacity(512)
                try info.writeWireJSON(into: &bytes)
                let decoded = try IdentitySessionInfo(wireJSON: ByteBuffer(bytes: bytes).readableBytesView)
                precondition(decoded.expiresAt == info.expiresAt)
            }
        }
        let foundation = try median(runs: runs) {
            try time(iterations) {
                let decoded = try JSONDecoder().decode(IdentitySessionInfo.self, from: try JSONEncoder().encode(info))
                precondition(decoded.expiresAt == info.expiresAt)
            }
        }
        return (direct, foundation)
    }

    /// µs per iteration of `body`.
    static func time(_ iterations: Int, _ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        for _ in 0..<iterations {
            try body()
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return seconds * 1_000_000 / Double(iterations)
    }

    static func median(runs: Int, _ measure: () throws -> Double) rethrows -> Double {
        var results: [Double] = []
        for _ in 0..<runs {
            results.append(try measure())
        }
        return results.sorted()[results.count / 2]
    }
}

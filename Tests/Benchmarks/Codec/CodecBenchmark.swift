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
        let ratio = foundationMicros / directMicros
        print(String(format: "  direct codec: %.2f µs per record (encode + decode), %d bytes", directMicros, direct.count))
        print(String(format: "  Foundation's coders: %.2f µs per record (encode + decode), %d bytes", foundationMicros, foundation.count))
        // At the 30k loads/s konto-bench profile reaches, each µs per record is 3 % of a core on each side of the wire.
        print(String(format: "konto-bench codec: ratio=%.2f target=2.0 direct_us=%.2f foundation_us=%.2f saved_core_share_at_30k_per_s=%.2f iterations=%d runs=%d",
                     ratio, directMicros, foundationMicros, (foundationMicros - directMicros) * 30_000 / 1_000_000, iterations, runs))
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

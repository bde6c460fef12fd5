import Foundation
@testable import KontoWebAuthn
import Testing

@Suite("CBOR")
struct CBORDecoderTests {
    static func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! }
    }

    struct Vector: Sendable, CustomTestStringConvertible {
        let hex: String
        let value: CBORValue
        var testDescription: String { hex }
    }

    /// RFC 8949, appendix A (the definite-length items).
    static let vectors: [Vector] = [
        Vector(hex: "00", value: .unsigned(0)), Vector(hex: "17", value: .unsigned(23)), Vector(hex: "1818", value: .unsigned(24)),
        Vector(hex: "1903e8", value: .unsigned(1_000)), Vector(hex: "1a000f4240", value: .unsigned(1_000_000)),
        Vector(hex: "1b000000e8d4a51000", value: .unsigned(1_000_000_000_000)), Vector(hex: "1bffffffffffffffff", value: .unsigned(.max)),
        Vector(hex: "20", value: .negative(0)), Vector(hex: "3863", value: .negative(99)), Vector(hex: "3903e7", value: .negative(999)),
        Vector(hex: "f90000", value: .float(0)), Vector(hex: "f93e00", value: .float(1.5)), Vector(hex: "fa47c35000", value: .float(100_000)),
        Vector(hex: "fb3ff199999999999a", value: .float(1.1)), Vector(hex: "f4", value: .bool(false)), Vector(hex: "f5", value: .bool(true)),
        Vector(hex: "f6", value: .null), Vector(hex: "f7", value: .undefined), Vector(hex: "40", value: .bytes([])),
        Vector(hex: "4401020304", value: .bytes([1, 2, 3, 4])), Vector(hex: "60", value: .text("")), Vector(hex: "6449455446", value: .text("IETF")),
        Vector(hex: "62c3bc", value: .text("ü")), Vector(hex: "80", value: .array([])),
        Vector(hex: "8301820203820405", value: .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])])),
        Vector(hex: "a201020304", value: .map([CBORMapEntry(key: .unsigned(1), value: .unsigned(2)), CBORMapEntry(key: .unsigned(3), value: .unsigned(4))])),
        Vector(hex: "a26161016162820203", value: .map([
            CBORMapEntry(key: .text("a"), value: .unsigned(1)), CBORMapEntry(key: .text("b"), value: .array([.unsigned(2), .unsigned(3)])),
        ])),
        Vector(hex: "c074323031332d30332d32315432303a30343a30305a", value: .tagged(0, .text("2013-03-21T20:04:00Z"))),
    ]

    @Test("RFC 8949's examples", arguments: vectors)
    func rfcExamples(vector: Vector) throws {
        #expect(try CBORDecoder.decode(Self.bytes(vector.hex)) == vector.value)
    }

    @Test("integers, labels and lookups as COSE keys use them")
    func lookups() throws {
        let key = try CBORDecoder.decode(Self.bytes("a401022001215820" + String(repeating: "11", count: 32) + "03" + "26"))
        #expect(key[1]?.int == 2)
        #expect(key[3]?.int == -7)
        #expect(key[-1]?.int == 1)
        #expect(key[-2]?.bytes == [UInt8](repeating: 0x11, count: 32))
        #expect(CBORValue.negative(.max).int == nil)
    }

    struct Hostile: Sendable, CustomTestStringConvertible {
        let name: String
        let hex: String
        let reason: CBORDecoder.DecodingError.Reason
        var testDescription: String { name }
    }

    static let hostile = [
        Hostile(name: "a truncated integer", hex: "1a0000", reason: .truncated),
        Hostile(name: "a byte string longer than the input", hex: "5bffffffffffffffff00", reason: .truncated),
        Hostile(name: "an array claiming 2^64-1 items", hex: "9bffffffffffffffff", reason: .truncated),
        Hostile(name: "an indefinite-length byte string", hex: "5f42010243030405ff", reason: .indefiniteLength),
        Hostile(name: "nesting deeper than 16", hex: String(repeating: "81", count: 20) + "00", reason: .tooDeep),
        Hostile(name: "text that is not UTF-8", hex: "62c328", reason: .invalidUTF8),
        Hostile(name: "bytes after the item", hex: "0000", reason: .trailingBytes),
        Hostile(name: "a repeated map key", hex: "a201020103", reason: .duplicateKey),
        Hostile(name: "a reserved additional value", hex: "1c", reason: .unsupported),
        Hostile(name: "nothing", hex: "", reason: .truncated),
    ]

    @Test("hostile input is refused with its reason, never a crash or a big allocation", arguments: hostile)
    func refusals(input: Hostile) {
        #expect(throws: CBORDecoder.DecodingError.self) { try CBORDecoder.decode(Self.bytes(input.hex)) }
        do {
            _ = try CBORDecoder.decode(Self.bytes(input.hex))
        } catch {
            #expect(error.reason == input.reason)
        }
    }

    @Test("every prefix of a valid attestation-sized item is refused cleanly, and random bytes never crash")
    func prefixesAndNoise() {
        let valid = Self.bytes("a363666d74646e6f6e656761747453746d74a068617574684461746158" + "25" + String(repeating: "ab", count: 37))
        #expect((try? CBORDecoder.decode(valid)) != nil)
        for length in 0..<valid.count {
            #expect(throws: CBORDecoder.DecodingError.self) { try CBORDecoder.decode(Array(valid.prefix(length))) }
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let noise = (0..<Int.random(in: 0..<64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = try? CBORDecoder.decode(noise)
        }
    }
}

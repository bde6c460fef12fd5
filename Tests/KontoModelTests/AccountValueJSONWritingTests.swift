import Foundation
import KontoModel
import Testing

@Suite("Writing values as JSON directly")
struct AccountValueJSONWritingTests {
    static let values: [AccountValue] = [
        .string(""),
        .string("it's \"quoted\" \\ back/slash"),
        .string("\u{0}\u{1}\u{8}\u{C}\n\r\t\u{1F}\u{7F}"),
        .string("'; DROP TABLE profile_accounts; --"),
        .string("😀 שלום e\u{301} 中 \u{202E}rtl"),
        .bool(true), .bool(false), .null,
        .integer(0), .integer(-7), .integer(Int64.max), .integer(Int64.min),
        .double(0.1), .double(-2.5), .double(1e300), .double(.leastNonzeroMagnitude), .double(-0.0), .double(123456789.125),
        .array([]), .array([.integer(1), .string("two"), .array([.null]), .object(["k": .bool(true)])]),
        .object([:]),
        .object(["name": .object(["givenName": .string("Ada"), "familyName": .string("Lovelace")]), "q\"uote\\": .integer(1)]),
    ]

    @Test("JSONDecoder reads back what was written", arguments: values)
    func readableByJSONDecoder(_ value: AccountValue) throws {
        var bytes: [UInt8] = []
        try value.writeJSON(into: &bytes)
        let decoded = try JSONDecoder().decode(AccountValue.self, from: Data(bytes))
        #expect(decoded == value)
        // Doubles keep their exact bits (JSON has no negative zero test in ==, so compare bit patterns).
        if case .double(let written) = value, case .double(let read) = decoded {
            #expect(written.bitPattern == read.bitPattern || (written == 0 && read == 0))
        }
    }

    @Test("the direct reader reads back what was written", arguments: values)
    func readableByDirectParser(_ value: AccountValue) throws {
        var bytes: [UInt8] = []
        try value.writeJSON(into: &bytes)
        #expect(try AccountValue(parsingJSON: bytes) == value)
    }

    @Test("strings are escaped as RFC 8259 asks and the rest stays UTF-8")
    func escaping() {
        var bytes: [UInt8] = []
        AccountValue.writeJSONString("a\"b\\c/d\n\u{1}😀", into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == #""a\"b\\c/d\n\u0001😀""#)
    }

    @Test("a non-finite double is refused, as JSONEncoder refuses it", arguments: [Double.nan, .infinity, -.infinity])
    func nonFinite(_ number: Double) {
        var bytes: [UInt8] = []
        #expect(throws: AccountValue.JSONWriteError.self) { try AccountValue.array([.double(number)]).writeJSON(into: &bytes) }
    }

    @Test("details write their public values only, unless secrets are asked for")
    func detailsLeaveSecretsOut() throws {
        var details = AccountDetails(values: ["userId": .string("ada@example.org"), "plan": .string("pro")])
        details[identifier: "password"] = .string("hunter2")
        var bytes: [UInt8] = []
        try details.writeJSON(into: &bytes)
        #expect(try AccountValue.parseObject(json: bytes) == ["userId": .string("ada@example.org"), "plan": .string("pro")])
        bytes = []
        try details.writeJSON(into: &bytes, includingSecrets: true)
        #expect(try AccountValue.parseObject(json: bytes)["password"] == .string("hunter2"))
        // The same object as the Codable form.
        var direct: [UInt8] = []
        try details.writeJSON(into: &direct)
        #expect(try AccountValue.parseObject(json: direct) == AccountValue.parseObject(json: details.encoded()))
    }
}

import Foundation
import KontoModel
import Testing

@Suite("Reading stored JSON directly")
struct AccountValueJSONParsingTests {
    static let documents = [
        #"{}"#,
        #"{"name":{"givenName":"Ada","familyName":"Lovelace"},"dateOfBirth":"1815-12-10"}"#,
        #"{"a":[1,-2,3.5,1e3,-0.25E-2,0],"b":true,"c":false,"d":null,"e":[],"f":{}}"#,
        #"{"quote":"it's \"quoted\" \\ back\/slash","ctl":"\b\f\n\r\t"}"#,
        #"{"emoji":"😀 \ud83d\ude00","rtl":"שלום","combining":"e\u0301","bmp":"\u00e9\u4e2d"}"#,
        #"  { "spaced" : [ 1 , 2 ] , "x" : "y" }  "#,
        #"{"big":9223372036854775807,"small":-9223372036854775808,"beyond":9223372036854775808}"#,
        #"{"drop":"'; DROP TABLE profile_accounts; --"}"#,
    ]

    @Test("agrees with JSONDecoder on every document", arguments: documents)
    func agreesWithJSONDecoder(_ document: String) throws {
        let direct = try AccountValue.parseObject(json: Array(document.utf8))
        let decoded = try JSONDecoder().decode([String: AccountValue].self, from: Data(document.utf8))
        #expect(direct == decoded)
    }

    @Test("escapes and Unicode come out byte for byte")
    func escapes() throws {
        let values = try AccountValue.parseObject(json: Array(#"{"s":"a\"b\\c\/d\n😀\ud83d\ude00e\u0301"}"#.utf8))
        #expect(values["s"] == .string("a\"b\\c/d\n😀😀e\u{301}"))
    }

    @Test("integers stay integers, fractions and exponents are doubles")
    func numbers() throws {
        let values = try AccountValue.parseObject(json: Array(#"{"i":42,"d":42.5,"e":1e2,"n":-7}"#.utf8))
        #expect(values["i"] == .integer(42))
        #expect(values["n"] == .integer(-7))
        if case .double(let value)? = values["d"] { #expect(value == 42.5) } else { Issue.record("42.5 is not a double") }
        if case .double(let value)? = values["e"] { #expect(value == 100) } else { Issue.record("1e2 is not a double") }
    }

    @Test("malformed input is refused with its position", arguments: [
        "", "{", #"{"a"}"#, #"{"a":}"#, #"{"a":1,}"#, "[1,2", #"{"a":tru}"#, #"{"a":01}"#, #"{"a":1.}"#,
        #"{"a":-}"#, #"{"a":"\x"}"#, #"{"a":"\ud800"}"#, #"{"a":"\udc00"}"#, "{\"a\":\"tab\there\"}", #"{"a":1} x"#,
        #"{"a":"unterminated}"#, #"{1:2}"#, #"{"a":1e999}"#, "[]",
    ])
    func malformed(_ document: String) {
        #expect(throws: AccountValue.JSONParseError.self) {
            _ = try AccountValue.parseObject(json: Array(document.utf8))
        }
    }

    @Test("invalid UTF-8 is refused")
    func invalidUTF8() {
        #expect(throws: AccountValue.JSONParseError.self) {
            _ = try AccountValue.parseObject(json: [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D])
        }
    }

    @Test("very deep nesting is refused, not a crash")
    func deepNesting() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: AccountValue.JSONParseError.self) {
            _ = try AccountValue(parsingJSON: Array(deep.utf8))
        }
    }

    @Test("keeping names reads exactly those members of every document, as the full parse does", arguments: documents)
    func keepingAgreesWithFullParse(_ document: String) throws {
        let full = try AccountValue.parseObject(json: Array(document.utf8))
        for names in [[], Array(full.keys), Array(full.keys.sorted().prefix(1)), ["absent"] + full.keys.sorted().suffix(1)] {
            let kept = try AccountValue.parseObject(json: Array(document.utf8), keeping: names)
            #expect(kept == full.filter { names.contains($0.key) })
        }
    }

    @Test("skipped members are walked over correctly: nested containers, escaped quotes and backslashes")
    func skipping() throws {
        let document = #"{"skip":{"a":[1,{"b":"x\"}\\"},[]],"c":"\u007d]"},"s2":"\"}","keep":"yes","tail":[[{}]]}"#
        #expect(try AccountValue.parseObject(json: Array(document.utf8), keeping: ["keep"]) == ["keep": .string("yes")])
    }

    @Test("a malformed document is refused even where its malformed part is a member not kept", arguments: [
        #"{"skip":{"a":1,},"keep":1}"#, #"{"skip":[1,2,"keep":1}"#, #"{"skip":"unterminated,"keep":1}"#,
        "{\"skip\":\"tab\there\",\"keep\":1}", #"{"skip":{"a" 1},"keep":1}"#, #"{"skip":{1:2},"keep":1}"#,
        #"{"skip":tru,"keep":1}"#, #"{"skip":[1 2],"keep":1}"#, #"{"keep":1,"skip":{}"#, #"["keep"]"#, #"{"keep":1} x"#,
    ])
    func malformedWhileSkipping(_ document: String) {
        #expect(throws: AccountValue.JSONParseError.self) {
            _ = try AccountValue.parseObject(json: Array(document.utf8), keeping: ["keep"])
        }
    }

    @Test("very deep nesting in a skipped member is refused, not a crash")
    func deepNestingWhileSkipping() {
        let deep = #"{"skip":"# + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "}"
        #expect(throws: AccountValue.JSONParseError.self) {
            _ = try AccountValue.parseObject(json: Array(deep.utf8), keeping: ["keep"])
        }
    }
}

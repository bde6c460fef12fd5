import Foundation
@testable import IdentityService
import Testing

/// The duplicate-name scanner against the straightforward reading (JSONSerialization's keys) on documents without
/// duplicates, and on each kind of duplicate and malformed document.
@Suite struct JSONDuplicateKeysTests {
    static func scan(_ text: String) -> JSONDuplicateKeys.Outcome {
        JSONDuplicateKeys.scan(Array(text.utf8))
    }

    @Test("documents JSONSerialization reads without loss scan as unique", arguments: [
        #"{}"#,
        #"{"iss":"https://issuer.test","sub":"user-1","aud":["a","b"],"exp":1.5e9,"iat":-1,"nested":{"sub":1,"x":[{"sub":2},{"sub":3}]}}"#,
        #" { "a" : "with \"quotes\" and \\ and \u00e9" , "b" : [ true , false , null , 1e-3 ] } "#,
        #"{"email_verified":"true","name":"Ada \u2028 Lovelace","":0}"#,
    ])
    func unique(_ text: String) throws {
        #expect(Self.scan(text) == .unique)
        // The straightforward reading agrees: every name the text has is one key.
        _ = try JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    @Test("a name twice is found at the top, nested, in an array's object, and spelled with an escape")
    func duplicates() {
        #expect(Self.scan(#"{"sub":"a","sub":"b"}"#) == .duplicate("sub"))
        #expect(Self.scan(#"{"a":{"x":1,"y":2,"x":3}}"#) == .duplicate("x"))
        #expect(Self.scan(#"{"a":[{"k":1},{"k":1,"k":2}]}"#) == .duplicate("k"))
        #expect(Self.scan(#"{"sub":"a","\u0073ub":"b"}"#) == .duplicate("sub"))
        // The same name in two objects is no duplicate.
        #expect(Self.scan(#"{"a":{"k":1},"b":{"k":2}}"#) == .unique)
        // Where JSONSerialization and JSONDecoder part: one keeps the last, the other the first.
        let text = Data(#"{"sub":"a","sub":"b"}"#.utf8)
        let serialized = (try? JSONSerialization.jsonObject(with: text)) as? [String: Any]
        struct Claims: Decodable { var sub: String }
        #expect(serialized?["sub"] as? String != (try? JSONDecoder().decode(Claims.self, from: text))?.sub)
    }

    @Test("malformed and too deep documents are malformed, never a crash", arguments: [
        "", "{", #"{"a"}"#, #"{"a":}"#, #"{"a":1,}"#, #"{"a":1 "b":2}"#, #"{"a":"unterminated}"#, #"{a:1}"#, "[1,2", #"{"a":1}x"#,
        String(repeating: "[", count: 40) + String(repeating: "]", count: 40), #"{"\"#,
    ])
    func malformed(_ text: String) {
        #expect(Self.scan(text) == .malformed)
    }
}

import Foundation
import KontoErrors
@testable import KontoTestSupport
import Testing

@Suite("Contract placeholders")
struct ContractMatchingTests {
    static func example(_ name: String, request: String, response: String? = nil, error: ContractExample.ExpectedError? = nil) throws -> ContractExample {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("contract-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var object: [String: Any] = ["method": "m", "request": try ContractExample.parse(request)]
        if let response { object["response"] = try ContractExample.parse(response) }
        if let error {
            var errorObject: [String: Any] = ["code": error.code.rawValue, "retryable": error.retryable]
            if let details = error.details { errorObject["details"] = try ContractExample.parse(details) }
            object["error"] = errorObject
        }
        let file = directory.appendingPathComponent("\(name).json")
        try JSONSerialization.data(withJSONObject: object).write(to: file)
        return try ContractExample(file: file)
    }

    static func bytes(_ json: String) -> [UInt8] { Array(json.utf8) }

    @Test("generated values match by kind, and captured values are used by later requests and answers")
    func captureAndReference() throws {
        let signUp = try Self.example(
            "01-sign-up",
            request: #"{"userId":"ada"}"#,
            response: #"{"accountId":"$capture:account:uuid","token":"$capture:token:token","expiresAt":"$match:timestamp","version":1}"#
        )
        let validate = try Self.example(
            "02-validate",
            request: #"{"token":"$ref:token"}"#,
            response: #"{"accountId":"$ref:account","active":"$match:bool"}"#
        )
        var bindings = ContractBindings()
        let token = "dG9rZW4tdG9rZW4tdG9rZW4tdG9rZW4tdG9rZW4tdG9r_-"
        let account = "6F9619FF-8B86-D011-B42D-00C04FC964FF"
        #expect(try signUp.mismatches(
            inResponse: Self.bytes(#"{"accountId":"\#(account)","token":"\#(token)","expiresAt":"2026-11-23T10:00:00.123Z","version":1}"#),
            bindings: &bindings
        ).isEmpty)
        #expect(try validate.request(with: bindings) == #"{"token":"\#(token)"}"#)
        #expect(try validate.mismatches(inResponse: Self.bytes(#"{"accountId":"\#(account)","active":true}"#), bindings: &bindings).isEmpty)
        // Another account, or a number where a bool belongs, is a difference, named by its path.
        let wrong = try validate.mismatches(inResponse: Self.bytes(#"{"accountId":"other","active":1}"#), bindings: &bindings)
        #expect(wrong.count == 2)
        #expect(wrong.contains { $0.hasPrefix("$.accountId:") })
        #expect(wrong.contains { $0.hasPrefix("$.active:") })
    }

    @Test("a captured URL's query parameter is a later request's value ($query); a URL must be absolute with a host")
    func queryParameter() throws {
        let authorize = try Self.example("01-authorize", request: "{}", response: #"{"location":"$capture:redirect:url"}"#)
        let exchange = try Self.example("02-token", request: #"{"code":"$query:redirect:code"}"#, response: "{}")
        var bindings = ContractBindings()
        #expect(try authorize.mismatches(inResponse: Self.bytes(#"{"location":"https://app.example.org/cb?state=s&code=abc%2Bdef"}"#), bindings: &bindings).isEmpty)
        #expect(try exchange.request(with: bindings) == #"{"code":"abc+def"}"#)
        // A parameter the URL lacks names what is missing.
        let missing = try Self.example("03-token", request: #"{"code":"$query:redirect:nonce"}"#, response: "{}")
        #expect(throws: ContractExampleError.self) { try missing.request(with: bindings) }
        var other = ContractBindings()
        #expect(try authorize.mismatches(inResponse: Self.bytes(#"{"location":"/relative?code=x"}"#), bindings: &other).count == 1)
        #expect(throws: ContractExampleError.self) { try ContractPlaceholder.parse("$query:redirect") }
    }

    @Test("a value of the wrong kind, a missing member and an extra member are all reported")
    func differences() throws {
        let example = try Self.example("01", request: "{}", response: #"{"id":"$match:uuid","n":"$match:integer","at":"$match:timestamp","list":[1,2]}"#)
        var bindings = ContractBindings()
        let differences = try example.mismatches(
            inResponse: Self.bytes(#"{"id":"not-a-uuid","n":1.5,"at":"yesterday","list":[1],"extra":true}"#),
            bindings: &bindings
        )
        #expect(differences.count == 5, "\(differences)")
        let missing = try example.mismatches(inResponse: Self.bytes(#"{"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","n":2,"at":"2026-01-01T00:00:00Z"}"#), bindings: &bindings)
        #expect(missing == ["$.list: missing"])
    }

    @Test("error details match with placeholders too; code and flag exactly")
    func errorDetails() throws {
        let example = try Self.example(
            "01",
            request: "{}",
            error: .init(code: KontoErrorCode(rawValue: "account.throttled"), retryable: true, details: #"{"retryAfterSeconds":"$match:integer"}"#)
        )
        var bindings = ContractBindings()
        #expect(try example.mismatches(inError: .init(code: .throttled, retryable: true, details: #"{"retryAfterSeconds":30}"#), bindings: &bindings).isEmpty)
        let wrong = try example.mismatches(inError: .init(code: .throttled, retryable: false, details: #"{"retryAfterSeconds":"soon"}"#), bindings: &bindings)
        #expect(wrong.count == 2)
    }

    @Test("consumers get a sample of each kind, and references get their capture's sample")
    func samples() throws {
        let examples = try ContractExample.samples(of: [
            Self.example("01", request: "{}", response: #"{"token":"$capture:token:token","id":"$match:uuid"}"#),
            Self.example("02", request: #"{"token":"$ref:token"}"#, response: "{}"),
        ])
        let first = try #require(examples.first?.response)
        let object = try #require(try ContractExample.parse(first) as? [String: Any])
        #expect(ContractPlaceholder.Kind.token.accepts(object["token"] as Any))
        #expect(ContractPlaceholder.Kind.uuid.accepts(object["id"] as Any))
        #expect(examples.last?.request == #"{"token":"\#(object["token"] as? String ?? "")"}"#)
    }

    @Test("malformed placeholders and references to nothing are errors, not silent matches")
    func refused() throws {
        #expect(throws: ContractExampleError.self) { try ContractPlaceholder.parse("$match:colour") }
        #expect(throws: ContractExampleError.self) { try ContractPlaceholder.parse("$capture:onlyname") }
        #expect(try ContractPlaceholder.parse("$5.00") == nil)
        let example = try Self.example("01", request: #"{"token":"$ref:never"}"#, response: "{}")
        #expect(throws: ContractExampleError.self) { try example.request(with: ContractBindings()) }
    }
}

import Foundation
import KontoContracts
import KontoModel
import KontoWire
import NIOCore
import Testing

/// The hand-written JSON of the session check (its request and its answer) must mean what their Codable form means,
/// both ways, also with an older peer's members.
@Suite("Session check payloads: direct JSON")
struct IdentitySessionWireJSONTests {
    static let infos = [
        IdentitySessionInfo(
            account: IdentityAccountFacts(accountId: "acc-1", userId: nil, isAnonymous: true),
            sessionId: "s-1", expiresAt: Timestamp(milliseconds: 0), privilegedUntil: nil
        ),
        IdentitySessionInfo(
            account: IdentityAccountFacts(
                accountId: "'; DROP TABLE sessions; -- \"😀\"", userId: "e\u{301}ve@example.org", isAnonymous: false,
                emailVerified: false, verifiedEmail: "שלום@example.org", createdAt: Timestamp(milliseconds: -62_135_596_800_000)
            ),
            sessionId: "s\n2", expiresAt: Timestamp(milliseconds: 253_402_300_799_999),
            privilegedUntil: Timestamp(milliseconds: 1_764_000_300_789), assuranceLevel: 2
        ),
        IdentitySessionInfo(
            account: IdentityAccountFacts(accountId: "acc-3", userId: "ada", isAnonymous: false, emailVerified: true, createdAt: Timestamp(milliseconds: 1_764_000_000_001)),
            sessionId: "s-3", expiresAt: Timestamp(milliseconds: 1_766_592_000_450), privilegedUntil: nil, assuranceLevel: 1
        ),
    ]

    @Test("an answer written directly decodes with JSONDecoder, and one from JSONEncoder reads directly", arguments: infos)
    func infoBothWays(_ info: IdentitySessionInfo) throws {
        var bytes: [UInt8] = []
        try info.writeWireJSON(into: &bytes)
        #expect(try JSONDecoder().decode(IdentitySessionInfo.self, from: Data(bytes)) == info)
        let encoded = try JSONEncoder().encode(info)
        #expect(try IdentitySessionInfo(wireJSON: ByteBuffer(bytes: encoded).readableBytesView) == info)
        // The same members as the Codable form, the older gateway's flat ones included.
        let direct = try JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary
        let foundation = try JSONSerialization.jsonObject(with: encoded) as? NSDictionary
        #expect(direct != nil && direct == foundation)
    }

    @Test("a request written directly decodes with JSONDecoder, and one from JSONEncoder reads directly", arguments: ["", "tok", "a\"b\\c\u{7f}😀"])
    func requestBothWays(_ token: String) throws {
        let request = IdentitySessionRequest(token: BearerToken(token))
        var bytes: [UInt8] = []
        try request.writeWireJSON(into: &bytes)
        #expect(try JSONDecoder().decode(IdentitySessionRequest.self, from: Data(bytes)) == request)
        #expect(try IdentitySessionRequest(wireJSON: ByteBuffer(bytes: try JSONEncoder().encode(request)).readableBytesView) == request)
    }

    @Test("an older Identity's answer (the facts as flat members, no account) reads as JSONDecoder reads it", arguments: [
        #"{"accountId":"a","isAnonymous":false,"userId":"u","emailVerified":true,"sessionId":"s","expiresAt":"2026-01-01T12:00:00.123Z"}"#,
        #"{"account":null,"accountId":"a","isAnonymous":true,"sessionId":"s","expiresAt":"2026-01-01T12:00:00Z","privilegedUntil":null,"extra":[1]}"#,
        #"{"account":{"accountId":"b","isAnonymous":false,"x":{}},"accountId":"a","isAnonymous":true,"sessionId":"s","expiresAt":"2026-01-01T12:00:00.5Z","assuranceLevel":2.0}"#,
    ])
    func olderAnswers(_ payload: String) throws {
        let direct = try IdentitySessionInfo(wireJSON: ByteBuffer(string: payload).readableBytesView)
        #expect(direct == (try JSONDecoder().decode(IdentitySessionInfo.self, from: Data(payload.utf8))))
    }

    @Test("what JSONDecoder refuses is refused", arguments: [
        #""#, #"[]"#, #"{"account":{"accountId":"a","isAnonymous":false},"sessionId":"s"}"#,
        #"{"account":{"accountId":"a","isAnonymous":1},"sessionId":"s","expiresAt":"2026-01-01T12:00:00Z"}"#,
        #"{"account":{"accountId":"a"},"sessionId":"s","expiresAt":"2026-01-01T12:00:00Z"}"#,
        #"{"account":[],"sessionId":"s","expiresAt":"2026-01-01T12:00:00Z"}"#,
        #"{"isAnonymous":false,"sessionId":"s","expiresAt":"2026-01-01T12:00:00Z"}"#,
        #"{"account":{"accountId":"a","isAnonymous":false},"sessionId":"s","expiresAt":"yesterday"}"#,
        #"{"account":{"accountId":"a","isAnonymous":false,"createdAt":12},"sessionId":"s","expiresAt":"2026-01-01T12:00:00Z"}"#,
        #"{"account":{"accountId":"a","isAnonymous":false},"sessionId":"s","expiresAt":"2026-01-01T12:00:00Z","assuranceLevel":1.5}"#,
        #"{"account":{"accountId":"a","isAnonymous":false,"userId":7},"sessionId":"s","expiresAt":"2026-01-01T12:00:00Z"}"#,
        #"{"account":{"accountId":"a","isAnonymous":false},"sessionId":"s","expiresAt":"2026-01-01T12:00:00Z"} trailing"#,
    ])
    func refusedInfos(_ payload: String) {
        #expect(throws: (any Error).self) { try IdentitySessionInfo(wireJSON: ByteBuffer(string: payload).readableBytesView) }
        #expect(throws: (any Error).self) { try JSONDecoder().decode(IdentitySessionInfo.self, from: Data(payload.utf8)) }
    }

    @Test("a request without a string token is refused", arguments: [#"{}"#, #"{"token":null}"#, #"{"token":1}"#, #"{"token":"a"#])
    func refusedRequests(_ payload: String) {
        #expect(throws: (any Error).self) { try IdentitySessionRequest(wireJSON: ByteBuffer(string: payload).readableBytesView) }
        #expect(throws: (any Error).self) { try JSONDecoder().decode(IdentitySessionRequest.self, from: Data(payload.utf8)) }
    }
}

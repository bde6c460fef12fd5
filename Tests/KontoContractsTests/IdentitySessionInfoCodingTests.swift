import Foundation
import KontoContracts
import KontoModel
import Testing

@Suite("The session check's answer across versions")
struct IdentitySessionInfoCodingTests {
    static let facts = IdentityAccountFacts(accountId: "a1", userId: "Ada@Example.org", isAnonymous: false, emailVerified: true)
    static let info = IdentitySessionInfo(account: facts, sessionId: "s1", expiresAt: Timestamp(milliseconds: 1_800_000_000_000), privilegedUntil: nil, assuranceLevel: 2)

    @Test("an older Identity's answer, the facts as separate fields and no account member, decodes to the same facts")
    func olderAnswer() throws {
        let older = #"{"accountId":"a1","sessionId":"s1","expiresAt":"2027-01-15T08:00:00.000Z","isAnonymous":false,"userId":"Ada@Example.org","emailVerified":true,"assuranceLevel":2}"#
        #expect(try JSONDecoder().decode(IdentitySessionInfo.self, from: Data(older.utf8)) == Self.info)
    }

    @Test("the answer carries the facts as one member and, for an older gateway, as the separate fields it reads")
    func newerAnswer() throws {
        let object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(Self.info)) as? [String: Any])
        let member = try #require(object["account"])
        #expect(try JSONDecoder().decode(IdentityAccountFacts.self, from: JSONSerialization.data(withJSONObject: member)) == Self.facts)
        #expect(object["accountId"] as? String == "a1")
        #expect(object["userId"] as? String == "Ada@Example.org")
        #expect(object["isAnonymous"] as? Bool == false)
        #expect(object["emailVerified"] as? Bool == true)
        #expect(try JSONDecoder().decode(IdentitySessionInfo.self, from: JSONEncoder().encode(Self.info)) == Self.info)
    }

    @Test("where both are present, the account member is what counts")
    func memberWins() throws {
        let both = #"{"account":{"accountId":"a1","userId":"Ada@Example.org","isAnonymous":false,"emailVerified":true},"accountId":"stale","sessionId":"s1","expiresAt":"2027-01-15T08:00:00.000Z","isAnonymous":true,"assuranceLevel":2}"#
        #expect(try JSONDecoder().decode(IdentitySessionInfo.self, from: Data(both.utf8)) == Self.info)
    }

    @Test("an answer with neither the member nor the separate fields is refused")
    func neither() {
        let bare = #"{"sessionId":"s1","expiresAt":"2027-01-15T08:00:00.000Z"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(IdentitySessionInfo.self, from: Data(bare.utf8)) }
    }
}

import Foundation
import KontoModel
import Testing

@Suite("AccountEvent")
struct AccountEventTests {
    private static func details() -> AccountDetails {
        var details = Fixtures.details()
        details[\.password] = "event-secret-pw"
        return details
    }

    static let kinds: [AccountEvent.Kind] = [
        .associatedAccount,
        .detailsChanged(keys: ["biography", "name"]),
        .disassociatingAccount,
        .deletingAccount,
        .passwordResetRequested(userId: "ada@example.org", token: SealedResetToken(box: "sealed-reset-token-123"), expiresAt: Date(timeIntervalSince1970: 1_800_000_000.25)),
        .passwordChanged,
        .userIdChanged(previous: "ada@example.org", new: "ada@work.example"),
        .sessionsRevoked,
        .mailRequested(MailRequest(message: .passwordReset, to: "ada@example.org", sealedToken: SealedResetToken(box: "sealed-box"), expiresAt: Date(timeIntervalSince1970: 1_800_000_000.25))),
        .mailRequested(MailRequest(message: .factorAdded, to: "ada@example.org", values: ["factorType": "totp"])),
        .mailRequested(MailRequest(message: MailRequest.Message(rawValue: "aNewerMessage"), to: "ada@example.org")),
    ]

    @Test("A mail request's secret is shown sealed, never as its box; a notice has no token or expiry in its JSON")
    func mailRequested() throws {
        let sealed = AccountEvent(accountId: "a", kind: .mailRequested(MailRequest(message: .signInCode, to: "ada@example.org", sealedToken: SealedResetToken(box: "the-box"))))
        #expect(!sealed.description.contains("the-box") && sealed.description.contains("<sealed>"))
        let notice = AccountEvent(accountId: "a", kind: .mailRequested(MailRequest(message: .passwordChanged, to: "ada@example.org")))
        let object = try #require(try JSONSerialization.jsonObject(with: try JSONEncoder().encode(notice)) as? [String: Any])
        #expect(Set(object.keys) == ["id", "type", "time", "accountId", "message", "to"])
    }

    @Test("Every kind survives a JSON round trip with id, time and accountId", arguments: kinds)
    func roundTrip(kind: AccountEvent.Kind) throws {
        let event = AccountEvent(time: Date(timeIntervalSince1970: 1_700_000_000.123), accountId: "acc-1", kind: kind)
        let data = try JSONEncoder().encode(event)
        let object = try Fixtures.jsonObject(data)
        #expect(object["type"] as? String == kind.name)
        #expect(object["accountId"] as? String == "acc-1")
        #expect(object["id"] as? String == event.id.uuidString)
        #expect(object["time"] as? String == "2023-11-14T22:13:20.123Z")

        let decoded = try JSONDecoder().decode(AccountEvent.self, from: data)
        #expect(decoded.id == event.id)
        #expect(decoded.time == event.time)
        #expect(decoded.kind.name == kind.name)
        #expect(decoded.kind == kind)
        #expect(!event.description.contains("reset-token-123"))
    }

    @Test("Events are thin: no details; a detailsChanged names the keys set or removed")
    func thin() throws {
        var previous = Self.details()
        previous[\.biography] = "Poet"
        var new = Self.details()
        new[\.name] = PersonName(givenName: "Augusta", familyName: "King")
        let keys = AccountEvent.changedKeys(previous: previous, new: new)
        #expect(keys == ["biography", "name"])
        #expect(AccountEvent.changedKeys(previous: previous, new: previous) == [])
        for kind: AccountEvent.Kind in [.associatedAccount, .disassociatingAccount, .detailsChanged(keys: keys)] {
            let data = try JSONEncoder().encode(AccountEvent(accountId: "acc-1", kind: kind))
            let object = try Fixtures.jsonObject(data)
            #expect(Set(object.keys).subtracting(["id", "type", "time", "accountId", "keys"]).isEmpty, "\(object)")
            #expect(!String(decoding: data, as: UTF8.self).contains("Ada"))
        }
    }

    @Test("Events stored before they were thin still decode: details dropped, changed keys worked out")
    func storedBeforeThin() throws {
        let encoder = JSONEncoder()
        let details = String(decoding: try encoder.encode(Self.details()), as: UTF8.self)
        var changed = Self.details()
        changed[\.biography] = "Poet"
        let new = String(decoding: try encoder.encode(changed), as: UTF8.self)
        let id = "6F1D4F5E-8E7B-4C59-9C59-3B8F1B0C0A11"
        let documents: [(String, AccountEvent.Kind)] = [
            (#"{"id":"\#(id)","type":"associatedAccount","time":"2024-01-01T00:00:00Z","accountId":"a","details":\#(details)}"#, .associatedAccount),
            (#"{"id":"\#(id)","type":"disassociatingAccount","time":"2024-01-01T00:00:00Z","accountId":"a","details":\#(details)}"#, .disassociatingAccount),
            (#"{"id":"\#(id)","type":"detailsChanged","time":"2024-01-01T00:00:00Z","accountId":"a","previous":\#(details),"new":\#(new)}"#, .detailsChanged(keys: ["biography"])),
        ]
        for (json, kind) in documents {
            #expect(try JSONDecoder().decode(AccountEvent.self, from: Data(json.utf8)).kind == kind)
        }
        // Neither form: refused.
        let neither = #"{"id":"\#(id)","type":"detailsChanged","time":"2024-01-01T00:00:00Z","accountId":"a"}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(AccountEvent.self, from: Data(neither.utf8)) }
    }

    @Test("Time is kept to the millisecond so it survives encoding", arguments: [10.123_456, 1_700_000_000.999_7, -0.25, 0])
    func timeRounded(seconds: Double) throws {
        let event = AccountEvent(time: Date(timeIntervalSince1970: seconds), accountId: "a", kind: .passwordChanged)
        #expect(abs(event.time.timeIntervalSince1970 - seconds) <= 0.000_5)
        let decoded = try JSONDecoder().decode(AccountEvent.self, from: try JSONEncoder().encode(event))
        #expect(decoded.time == event.time)
    }

    @Test("Unknown types are refused")
    func unknownType() {
        let json = #"{"id":"6F1D4F5E-8E7B-4C59-9C59-3B8F1B0C0A11","type":"accountExploded","time":"2024-01-01T00:00:00Z","accountId":"a"}"#
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(AccountEvent.self, from: Data(json.utf8))
        }
    }

    @Test("Timestamps without fractional seconds are accepted")
    func timestampsWithoutFraction() throws {
        let json = #"{"id":"6F1D4F5E-8E7B-4C59-9C59-3B8F1B0C0A11","type":"sessionsRevoked","time":"2024-01-01T00:00:00Z","accountId":"a"}"#
        let event = try JSONDecoder().decode(AccountEvent.self, from: Data(json.utf8))
        #expect(event.time == Date(timeIntervalSince1970: 1_704_067_200))
        #expect(event.kind == .sessionsRevoked)
    }
}

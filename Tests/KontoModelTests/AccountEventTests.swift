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
        .associatedAccount(details()),
        .detailsChanged(previous: details(), new: { var new = details(); new[\.biography] = "Poet"; return new }()),
        .disassociatingAccount(details()),
        .deletingAccount,
        .passwordResetRequested(userId: "ada@example.org", token: SealedResetToken(box: "sealed-reset-token-123"), expiresAt: Date(timeIntervalSince1970: 1_800_000_000.25)),
        .passwordChanged,
        .userIdChanged(previous: "ada@example.org", new: "ada@work.example"),
        .sessionsRevoked,
    ]

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
        #expect(decoded.kind == Self.withoutSecrets(kind))
        #expect(!String(decoding: data, as: UTF8.self).contains("event-secret-pw"))
        #expect(!event.description.contains("event-secret-pw"))
        #expect(!event.description.contains("reset-token-123"))
    }

    /// Details lose only the password on the way, which is the point.
    private static func withoutSecrets(_ kind: AccountEvent.Kind) -> AccountEvent.Kind {
        func strip(_ details: AccountDetails) -> AccountDetails {
            details.filter { !details.isSecret($0) }
        }
        return switch kind {
        case let .associatedAccount(details): .associatedAccount(strip(details))
        case let .disassociatingAccount(details): .disassociatingAccount(strip(details))
        case let .detailsChanged(previous, new): .detailsChanged(previous: strip(previous), new: strip(new))
        default: kind
        }
    }

    @Test("Details in events carry everything but the password")
    func detailsWithoutPassword() throws {
        let event = AccountEvent(accountId: "acc-1", kind: .associatedAccount(Self.details()))
        let decoded = try JSONDecoder().decode(AccountEvent.self, from: try JSONEncoder().encode(event))
        guard case let .associatedAccount(details) = decoded.kind else {
            Issue.record("Wrong kind \(decoded.kind.name)")
            return
        }
        var expected = Self.details()
        expected[\.password] = nil
        #expect(details == expected)
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

import KontoModel
import Testing

/// Addresses that can receive mail (issue 44, 12): sign-up and a change of userId take only what the courier sends to.
@Suite("Email address syntax")
struct EmailAddressSyntaxTests {
    @Test("one ASCII address that mail can reach is taken", arguments: [
        "ada@example.org", "first.last+tag@sub.example.co.uk", "o'hara@example.org", "x@localhost", "a!#$%&*/=?^_`{|}~-@example.org",
    ])
    func deliverable(_ address: String) {
        #expect(EmailAddressSyntax.isDeliverable(address))
    }

    @Test("line breaks, several addresses, brackets, quotes, control characters, empty or dotted parts, over-long ones are refused", arguments: [
        "ada@example.org\nbcc@evil.example", "ada@example.org\r\n", "ada@example.org, eve@evil.example", "ada@example.org;eve@evil.example",
        "<ada@example.org>", "Ada <ada@example.org>", "\"ada\"@example.org", "ada @example.org", "ada@exam ple.org", "ada\u{0}@example.org",
        "ada@", "@example.org", "ada", "ada@@example.org", ".ada@example.org", "ada.@example.org", "a..da@example.org", "ada@.example.org",
        "ada@example..org", "ada@-example.org", "ada@example-.org", "ada@bücher.de", "ädä@example.org",
        String(repeating: "a", count: 65) + "@example.org", "a@" + String(repeating: "b", count: 64) + ".org",
        String(repeating: "a", count: 60) + "@" + String(repeating: "b.", count: 100) + "org",
    ])
    func refused(_ address: String) {
        #expect(!EmailAddressSyntax.isDeliverable(address))
    }

    @Test("sign-up's validation refuses a userId (where userIds are addresses) and an email detail no mail can reach, naming the rule")
    func validation() throws {
        let configuration = try AccountConfiguration(userIdType: .emailAddress, keys: [.requires(\.userId), .collects(\.email)])
        func errors(_ values: [String: AccountValue]) -> [AccountFieldError] {
            configuration.valueErrors(in: values)
        }
        #expect(errors(["userId": .string("ada@example.org"), "email": .string("ada@work.example")]).isEmpty)
        let both = errors(["userId": .string("ada@example.org\nbcc@evil.example"), "email": .string("a@example.org, b@example.org")])
        #expect(both.map(\.key) == ["email", "userId"] && both.allSatisfy { $0.code == .rule("deliverableEmail") && $0.message == EmailAddressSyntax.message }, "\(both)")
        // The seed rule's own failure is reported alone (no second error for the same value).
        #expect(errors(["userId": .string("no-at-sign")]).map(\.code) == [.rule("minimalEmail")])
        // Where userIds are usernames, the userId is no address.
        let usernames = try AccountConfiguration(userIdType: .username, keys: [.requires(\.userId)])
        #expect(usernames.valueErrors(in: ["userId": .string("ada, the countess")]).isEmpty)
    }
}

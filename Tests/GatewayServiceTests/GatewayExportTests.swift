import Foundation
import GatewayService
import IdentityService
import NIOHTTP1
import Testing

/// `GET /v1/account/export` and the console's "Download my data", over HTTP against the real services: one document
/// from Identity, Profile and Notifications, security-related, rate-limited, never a secret.
@Suite("Gateway: a copy of the account's data")
struct GatewayExportTests {
    static let password = "correct horse battery"

    /// Exports until the events the account's changes published have reached Notifications (the outbox relays them
    /// shortly after each change), for at most 30 s.
    static func export(_ gateway: GatewayHarness.Running, token: String, containing types: Set<String>) async throws -> GatewayHarness.HTTPAnswer {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let answer = try await gateway.request(.GET, "/v1/account/export", token: token)
            let events = ((answer.object["events"] as? [String: Any])?["entries"] as? [[String: Any]]) ?? []
            if answer.status != 200 || types.isSubset(of: Set(events.compactMap { $0["type"] as? String })) || ContinuousClock.now > deadline { return answer }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    @Test("one document: details, credential, verification, mail preferences, sessions, factors, identities, audit and events; no sealed token nor any secret; attachment")
    func document() async throws {
        try await GatewayHarness.withGateway(configure: { $0.credentialsRateLimitPerMinute = 0 }) { gateway in
            let (token, accountId) = try await gateway.signUp("ada@example.org", password: Self.password, details: #"{"name":{"givenName":"Ada","familyName":"Lovelace"}}"#)
            let changed = try await gateway.request(.PATCH, "/v1/account", json: #"{"set":{"name":{"givenName":"Augusta Ada","familyName":"King"}}}"#, token: token)
            #expect(changed.status == 200, "\(changed.text)")
            let phone = try await gateway.request(
                .POST, "/v1/sessions", json: #"{"userId":"ada@example.org","password":"\#(Self.password)"}"#, headers: [("User-Agent", "Ada's phone")]
            )
            #expect(phone.status == 200)
            #expect(try await gateway.request(.POST, "/v1/password-resets", json: #"{"userId":"ada@example.org"}"#).status == 202)

            let answer = try await Self.export(gateway, token: token, containing: ["associatedAccount", "detailsChanged", "passwordResetRequested", "mailRequested"])
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.contentType?.hasPrefix("application/json") == true)
            #expect(answer.headers.first(name: "Content-Disposition")?.hasPrefix("attachment; filename=\"konto-account-") == true)
            #expect(answer.headers.first(name: "Cache-Control")?.contains("no-store") == true)
            let document = answer.object
            let account = try #require(document["account"] as? [String: Any])
            let details = try #require(account["details"] as? [String: Any])
            #expect((details["name"] as? [String: Any])?["givenName"] as? String == "Augusta Ada")
            #expect(details["userId"] as? String == "ada@example.org")
            let credential = try #require(document["credential"] as? [String: Any])
            #expect(credential["accountId"] as? String == accountId && credential["hasPassword"] as? Bool == true && credential["userId"] as? String == "ada@example.org")
            let verification = try #require(document["verification"] as? [String: Any])
            #expect(verification["emailVerified"] as? Bool == false)
            #expect(((verification["pending"] as? [[String: Any]]) ?? []).map { $0["address"] as? String } == ["ada@example.org"])
            #expect((document["mailPreferences"] as? [String: Any])?["newSignIn"] as? Bool == true)
            let sessions = try #require(document["sessions"] as? [[String: Any]])
            #expect(sessions.count == 2)
            #expect(sessions.contains { $0["clientName"] as? String == "Ada's phone" && $0["current"] as? Bool == false })
            #expect(sessions.contains { $0["current"] as? Bool == true })
            #expect((document["factors"] as? [Any])?.isEmpty == true && (document["identities"] as? [Any])?.isEmpty == true)
            #expect((document["applications"] as? [Any])?.isEmpty == true, "no application has access")
            let audit = try #require(document["audit"] as? [String: Any])
            #expect(audit["complete"] as? Bool == true)
            let auditTypes = ((audit["entries"] as? [[String: Any]]) ?? []).compactMap { $0["type"] as? String }
            for type in ["account.exported", "account.created", "signIn.succeeded", "passwordReset.requested"] {
                #expect(auditTypes.contains(type), "\(auditTypes)")
            }
            let events = try #require((document["events"] as? [String: Any])?["entries"] as? [[String: Any]])
            #expect(events.allSatisfy { $0["accountId"] as? String == accountId })
            let reset = try #require(events.first { $0["type"] as? String == "passwordResetRequested" })
            #expect(reset["userId"] as? String == "ada@example.org" && reset["expiresAt"] != nil)
            #expect(events.contains { $0["type"] as? String == "mailRequested" && $0["message"] as? String == "passwordReset" && $0["to"] as? String == "ada@example.org" })
            #expect(events.first { $0["type"] as? String == "detailsChanged" }?["keys"] as? [String] == ["name"])
            // The sealed secrets are the courier's alone; nothing else is a secret either.
            #expect(!answer.text.contains("sealedToken"))
            #expect(!answer.text.contains(token))
            #expect(!answer.text.contains("argon2"))

            // Another account's session sees its own data only.
            let (other, otherId) = try await gateway.signUp("grace@example.org", password: Self.password)
            let theirs = try await gateway.request(.GET, "/v1/account/export", token: other)
            #expect(theirs.status == 200)
            #expect((theirs.object["credential"] as? [String: Any])?["accountId"] as? String == otherId)
            #expect(!theirs.text.contains(accountId) && !theirs.text.contains("ada@example.org"))
        }
    }

    @Test("security-related: no session 401; a session outside its privileged window 403; counted as a credential request per client address (429)")
    func refusals() async throws {
        try await GatewayHarness.withGateway(configure: { configuration in
            configuration.clientAddressHeader = "X-Forwarded-For"
            configuration.trustedProxies = GatewayLimitsTests.loopback
            configuration.credentialsRateLimitPerMinute = 2
        }) { gateway in
            #expect(try await gateway.request(.GET, "/v1/account/export").status == 401)
            #expect(try await gateway.request(.GET, "/v1/account/export", token: "not-a-session-token").code == "account.unauthenticated")
            // An anonymous session has no privileged window and no password to open one.
            let anonymous = try await gateway.request(.POST, "/v1/sessions/anonymous")
            let anonymousToken = try #require((anonymous.object["session"] as? [String: Any])?["token"] as? String)
            let shut = try await gateway.request(.GET, "/v1/account/export", token: anonymousToken, headers: [("X-Forwarded-For", "198.51.100.1")])
            #expect(shut.status == 403 && shut.code == "account.reauthenticationRequired", "\(shut.text)")

            let address = [("X-Forwarded-For", "198.51.100.2")]
            let signedUp = try await gateway.request(
                .POST, "/v1/accounts", json: #"{"userId":"ada@example.org","password":"\#(Self.password)","details":{"name":{"givenName":"Ada","familyName":"Lovelace"}}}"#,
                headers: [("X-Forwarded-For", "198.51.100.4")]
            )
            let token = try #require((signedUp.object["session"] as? [String: Any])?["token"] as? String, "\(signedUp.text)")
            for _ in 0..<2 {
                #expect(try await gateway.request(.GET, "/v1/account/export", token: token, headers: address).status == 200)
            }
            let limited = try await gateway.request(.GET, "/v1/account/export", token: token, headers: address)
            #expect(limited.status == 429 && limited.code == "request.rateLimited", "\(limited.text)")
            #expect(try await gateway.request(.GET, "/v1/account/export", token: token, headers: [("X-Forwarded-For", "198.51.100.3")]).status == 200)
        }
    }
}

import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
import NIOHTTP1
import Testing

/// Pre-hijacked accounts (Sudhodanan and Paverd, USENIX Security 2022; issue 44, 2) on the four executables and
/// PostgreSQL: someone signs up with another's address before its owner does, and sets the account up (a password,
/// sessions, a second factor, another address to come). Once the owner proves the mailbox — the verification link, a
/// reset, a mailed sign-in code — nothing the squatter set up works any more. (The federated classes, a provider
/// merging into an unverified account and a provider that does not vouch for the address, are refused where the
/// provider signs in: ExternalIdentityHTTPTests.)
@Suite("Pre-hijacked accounts over the real services", .serialized, .timeLimit(.minutes(5)))
struct PreHijackingTests {
    static let squatterPassword = "the squatter's password 1"

    static func mailedSecret(_ stack: KontoProcessStack, accountId: String, _ message: MailRequest.Message, number: Int = 1) async throws -> String {
        try #require(try await stack.mail(accountId: accountId, message, number: number, logger: GatewayHarness.logger).secret)
    }

    /// The `removed` list of the account's `accessSecured` mail: the owner is told what went.
    static func accessSecured(_ stack: KontoProcessStack, accountId: String) async throws -> String {
        try await stack.mail(accountId: accountId, .accessSecured, logger: GatewayHarness.logger).request.values["removed"] ?? ""
    }

    /// The squatter signs up with `userId`, signs in a second time and adds an authenticator app.
    static func squat(_ gateway: GatewayHarness.Running, _ userId: String, movingTo newUserId: String? = nil) async throws -> (accountId: String, sessions: [String]) {
        var (first, accountId) = try await gateway.signUp(userId, password: Self.squatterPassword)
        var userId = userId
        if let newUserId {
            // Moved to the owner's address before anything else (a change needs no second factor yet).
            let change = try await gateway.request(.PUT, "/v1/account/user-id", json: #"{"userId":"\#(newUserId)","currentPassword":"\#(Self.squatterPassword)"}"#, token: first)
            #expect(change.status == 204, "\(change.status) \(change.text)")
            userId = newUserId
            let again = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"\#(userId)","password":"\#(Self.squatterPassword)"}"#)
            first = try #require((again.object["session"] as? [String: Any])?["token"] as? String, "\(again.text)")
        }
        let login = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"\#(userId)","password":"\#(Self.squatterPassword)"}"#)
        let second = try #require((login.object["session"] as? [String: Any])?["token"] as? String, "\(login.text)")
        let enrolment = try await gateway.request(.POST, "/v1/account/factors/totp", token: first).object
        let secret = try #require(enrolment["secret"] as? String, "\(enrolment)")
        let factorId = try #require(enrolment["factorId"] as? String)
        let code = try #require(TOTPTestCode.code(base32Secret: secret))
        let confirmed = try await gateway.request(.POST, "/v1/account/factors/totp/\(factorId)/confirm", json: #"{"code":"\#(code)"}"#, token: first)
        #expect(confirmed.status == 200, "\(confirmed.text)")
        // From now on the squatter's password leads to the second factor only they hold.
        let challenged = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"\#(userId)","password":"\#(Self.squatterPassword)"}"#)
        #expect(challenged.status == 202, "\(challenged.text)")
        return (accountId, [first, second])
    }

    /// None of the squatter's sessions works, and their password signs in no more.
    static func squatterLockedOut(_ gateway: GatewayHarness.Running, _ userId: String, sessions: [String]) async throws {
        for session in sessions {
            #expect(try await gateway.request(.GET, "/v1/account", token: session).status == 401)
        }
        let login = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"\#(userId)","password":"\#(Self.squatterPassword)"}"#)
        #expect(login.status == 401 && login.code == "account.wrongCredentials", "\(login.status) \(login.text)")
    }

    @Test("the owner's first proof — the link, a reset, a mailed code, also after the squatter moved the account to the owner's address — ends the squatter's password, sessions and factor; the owner is mailed what went; later proofs end nothing")
    func ownerTakesTheAccountBack() async throws {
        try await GatewayHarness.withProcesses(environment: ["KONTO_IDENTITY_EMAIL_CODE_LOGIN": "true"]) { gateway, stack in
            // 1. Classic and unexpired session: the owner confirms the link from the squatter's sign-up.
            let linked = try await Self.squat(gateway, "link-owner@example.org")
            let link = try await Self.mailedSecret(stack, accountId: linked.accountId, .verifyEmail)
            #expect(try await gateway.request(.POST, "/v1/email-verifications/confirm", json: #"{"token":"\#(link)"}"#).status == 204)
            try await Self.squatterLockedOut(gateway, "link-owner@example.org", sessions: linked.sessions)
            let removed = try await Self.accessSecured(stack, accountId: linked.accountId)
            #expect(removed.contains("the password set before") && removed.contains("2 signed-in sessions") && removed.contains("an authenticator app"), "\(removed)")

            // 2. A reset through the mail: the new password signs in at once, no second factor of the squatter's asked.
            let reset = try await Self.squat(gateway, "reset-owner@example.org")
            #expect(try await gateway.request(.POST, "/v1/password-resets", json: #"{"userId":"reset-owner@example.org"}"#).status == 202)
            let resetToken = try await Self.mailedSecret(stack, accountId: reset.accountId, .passwordReset)
            #expect(try await gateway.request(.POST, "/v1/password-resets/confirm", json: #"{"token":"\#(resetToken)","newPassword":"the owner's own password"}"#).status == 204)
            try await Self.squatterLockedOut(gateway, "reset-owner@example.org", sessions: reset.sessions)
            let owner = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"reset-owner@example.org","password":"the owner's own password"}"#)
            #expect(owner.status == 200, "the squatter's factor is gone: \(owner.status) \(owner.text)")
            let ownerSession = try #require((owner.object["session"] as? [String: Any])?["token"] as? String)
            let factors = try await gateway.request(.GET, "/v1/account/factors", token: ownerSession)
            #expect(factors.status == 200 && !factors.text.contains("totp"), "\(factors.text)")

            // 3. A mailed sign-in code: the owner is signed in; the squatter's password and sessions are gone.
            let coded = try await Self.squat(gateway, "code-owner@example.org")
            #expect(try await gateway.request(.POST, "/v1/sessions/email-code", json: #"{"userId":"code-owner@example.org"}"#).status == 202)
            let code = try await Self.mailedSecret(stack, accountId: coded.accountId, .signInCode)
            let signedIn = try await gateway.request(.POST, "/v1/sessions/email-code/confirm", json: #"{"userId":"code-owner@example.org","code":"\#(code)"}"#)
            #expect(signedIn.status == 200, "no second factor of the squatter's: \(signedIn.status) \(signedIn.text)")
            try await Self.squatterLockedOut(gateway, "code-owner@example.org", sessions: coded.sessions)
            let codeSession = try #require((signedIn.object["session"] as? [String: Any])?["token"] as? String)
            #expect(try await gateway.request(.GET, "/v1/account", token: codeSession).status == 200)

            // 4. Unexpired email change: the squatter signs up with an address of their own, moves the account to the
            // owner's (unverified), and the owner confirms the link sent there.
            let moved = try await Self.squat(gateway, "squatter-own@example.org", movingTo: "moved-owner@example.org")
            let movedLink = try await Self.mailedSecret(stack, accountId: moved.accountId, .verifyEmail, number: 2)
            #expect(try await gateway.request(.POST, "/v1/email-verifications/confirm", json: #"{"token":"\#(movedLink)"}"#).status == 204)
            try await Self.squatterLockedOut(gateway, "moved-owner@example.org", sessions: moved.sessions)

            // Proven accounts stay as they are: the owner's later reset ends sessions as every reset does, nothing more.
            let second = try await gateway.request(.POST, "/v1/account/factors/totp", json: #"{"currentPassword":"the owner's own password"}"#, token: ownerSession).object
            let secret = try #require(second["secret"] as? String)
            let factorId = try #require(second["factorId"] as? String)
            let totp = try #require(TOTPTestCode.code(base32Secret: secret))
            #expect(try await gateway.request(.POST, "/v1/account/factors/totp/\(factorId)/confirm", json: #"{"code":"\#(totp)"}"#, token: ownerSession).status == 200)
            #expect(try await gateway.request(.POST, "/v1/password-resets", json: #"{"userId":"reset-owner@example.org"}"#).status == 202)
            let again = try await Self.mailedSecret(stack, accountId: reset.accountId, .passwordReset, number: 2)
            #expect(try await gateway.request(.POST, "/v1/password-resets/confirm", json: #"{"token":"\#(again)","newPassword":"the owner's newer password"}"#).status == 204)
            let withFactor = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"reset-owner@example.org","password":"the owner's newer password"}"#)
            #expect(withFactor.status == 202, "the owner's own factor stays: \(withFactor.status) \(withFactor.text)")
        }
    }
}

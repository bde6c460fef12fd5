import Crypto
import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWebAuthn
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
    @Test("the first proof also ends the applications the squatter let in (a consent with offline_access, its refresh token) and turns back on the mail the squatter silenced; the owner is told, and asked again")
    func firstProofEndsApplicationsAndMail() async throws {
        try await GatewayAdminHostileInputTests.withSystem { gateway, _, stack, _ in
            let userId = "apps-owner@example.org"
            let (squatter, accountId) = try await gateway.signUp(userId, password: Self.squatterPassword)
            // Silenced: no notice of the squatter's sign-ins would reach the owner.
            let silenced = try await gateway.request(
                .PUT, "/v1/account/mail-preferences", json: #"{"newSignIn":false,"currentPassword":"\#(Self.squatterPassword)"}"#, token: squatter
            )
            #expect(silenced.status == 200 && silenced.object["newSignIn"] as? Bool == false, "\(silenced.text)")
            // A third-party application, consented to with offline_access: later sign-ins would be silent.
            let identityPort = try #require(stack.environment["KONTO_IDENTITY_PORT"].flatMap(Int.init))
            let identity = WireClient(
                configuration: .init(port: identityPort, serviceName: WireAllowList.gateway, serverName: IdentityContract.serviceName, secret: WireSecret(stack.wireSecret)),
                logger: GatewayHarness.logger
            )
            try await RunningServices.with([identity], logger: GatewayHarness.logger) { () async throws in
                func authorize(_ session: String, consent: Bool) async throws -> (IdentityOpenIDAuthorization, String) {
                    let verifier = Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
                    let challenge = Base64URL.encode(Array(SHA256.hash(data: Data(verifier.utf8))))
                    let parameters = [
                        ("response_type", "code"), ("client_id", "app"), ("redirect_uri", "https://app.example.org/callback"), ("scope", "openid email offline_access"),
                        ("state", "s"), ("code_challenge", challenge), ("code_challenge_method", "S256"),
                    ].map { IdentityOpenIDParameter($0.0, $0.1) }
                    let answer = try await identity.call(IdentityContract.openIDAuthorize, IdentityOpenIDAuthorizeRequest(
                        token: BearerToken(session), parameters: parameters, requestedAt: Timestamp(Date()), consentGiven: consent
                    ))
                    return (answer, verifier)
                }
                let (granted, verifier) = try await authorize(squatter, consent: true)
                let code = try #require(URLComponents(string: granted.location ?? "")?.queryItems?.first { $0.name == "code" }?.value, "\(granted)")
                let tokens = try await GatewayOpenIDTests.form(gateway, "/oauth2/token", [
                    ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", "https://app.example.org/callback"), ("code_verifier", verifier), ("client_id", "app"),
                ], authorization: nil)
                let refreshToken = try #require(tokens.object["refresh_token"] as? String, "\(tokens.text)")

                // The owner proves the mailbox with the sign-up's link.
                let link = try await Self.mailedSecret(stack, accountId: accountId, .verifyEmail)
                #expect(try await gateway.request(.POST, "/v1/email-verifications/confirm", json: #"{"token":"\#(link)"}"#).status == 204)
                let refreshed = try await GatewayOpenIDTests.form(gateway, "/oauth2/token", [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", "app")], authorization: nil)
                #expect(refreshed.status == 400 && refreshed.object["error"] as? String == "invalid_grant", "\(refreshed.text)")
                let removed = try await Self.accessSecured(stack, accountId: accountId)
                #expect(removed.contains("1 application's access") && removed.contains("mail settings turned off"), "\(removed)")

                // The owner sets a password and signs in: the notices are on, and the application asks first.
                #expect(try await gateway.request(.POST, "/v1/password-resets", json: #"{"userId":"\#(userId)"}"#).status == 202)
                let reset = try await Self.mailedSecret(stack, accountId: accountId, .passwordReset)
                #expect(try await gateway.request(.POST, "/v1/password-resets/confirm", json: #"{"token":"\#(reset)","newPassword":"the owner's own password"}"#).status == 204)
                let login = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"\#(userId)","password":"the owner's own password"}"#)
                let owner = try #require((login.object["session"] as? [String: Any])?["token"] as? String, "\(login.text)")
                #expect(try await gateway.request(.GET, "/v1/account/mail-preferences", token: owner).object["newSignIn"] as? Bool == true)
                #expect(try await authorize(owner, consent: false).0.outcome == .consent)
            }
        }
    }
}

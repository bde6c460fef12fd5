import AsyncHTTPClient
import Foundation
import KontoClient
import KontoClientAsyncHTTPClient
import KontoModel
import KontoTesting
import HTTPTypes
import NIOCore
import NIOHTTP1
import OpenAPIRuntime
import Synchronization
import Testing

/// KontoClient against a running gateway with the real services on PostgreSQL, and its error decoding against a
/// transport that answers in memory.
@Suite("KontoClient", .timeLimit(.minutes(3)))
struct KontoClientTests {
    /// Details with the name the default configuration requires.
    static func named(_ givenName: String) -> AccountDetails {
        var details = AccountDetails()
        details[\.name] = PersonName(givenName: givenName)
        return details
    }

    typealias Harness = GatewayHarness

    /// The error `body` throws, as a KontoClientError.
    static func refusal(_ body: () async throws -> Void) async -> KontoClientError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? KontoClientError
        }
    }

    @Test("the applications with access through Konto as an OpenID Provider: listed, revoked (their tokens end), a second revoke refused")
    func applications() async throws {
        try await Harness.withGateway(identityOptions: try GatewayOpenIDTests.options()) { gateway in
            let client = KontoClient(gatewayURL: gateway.baseURL)
            let session = try await client.signUp(userId: "ada.apps@example.org", password: "correct horse battery", details: Self.named("Ada")).session
            #expect(try await client.applications().isEmpty)
            let (code, verifier) = try await GatewayOpenIDTests.code(gateway, session: session.token)
            let tokens = try await GatewayOpenIDTests.form(gateway, "/oauth2/token", [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", "https://dashboard.example.org/callback"), ("code_verifier", verifier),
            ]).object
            let accessToken = try #require(tokens["access_token"] as? String)
            let listed = try await client.applications()
            #expect(listed.map(\.clientId) == ["dashboard"] && listed.first?.grants == 1 && listed.first?.consentedAt == nil)
            #expect(listed.first?.scopes == ["email", "offline_access", "openid", "profile"])
            try await client.revokeApplication(clientId: "dashboard")
            #expect(try await client.applications().isEmpty)
            #expect(try await gateway.request(.GET, "/oauth2/userinfo", token: accessToken).status == 401)
            let again = await Self.refusal { try await client.revokeApplication(clientId: "dashboard") }
            #expect(again?.code == "account.applicationNotFound")
        }
    }

    @Test("a whole journey with typed keys: sign up, read, modify, log in, security-related changes, log out everywhere, delete")
    func journey() async throws {
        try await Harness.withGateway { gateway in
            let client = KontoClient(gatewayURL: gateway.baseURL)
            var details = AccountDetails()
            details[\.name] = PersonName(givenName: "Ada", familyName: "Lovelace")
            details[\.dateOfBirth] = CalendarDate("1815-12-10")
            let signedUp = try await client.signUp(userId: "ada@example.org", password: "correct horse battery", details: details)
            #expect(signedUp[\.name]?.givenName == "Ada")
            var account = try await client.account()
            #expect(account.accountId == signedUp.session.accountId)
            #expect(account[\.dateOfBirth] == CalendarDate("1815-12-10"))
            #expect(!account.isAnonymous)
            // A change, then one from a stale version: 412 with the API's code.
            var change = AccountDetails()
            change[\.genderIdentity] = .female
            let changed = try await client.modify(set: change, remove: ["dateOfBirth"], ifVersion: account.version)
            #expect(changed[\.genderIdentity] == .female)
            #expect(changed[\.dateOfBirth] == nil)
            #expect(changed.version == account.version + 1)
            let stale = await Self.refusal { _ = try await client.modify(set: change, ifVersion: account.version) }
            #expect(stale?.code == "account.versionConflict")
            #expect(stale?.status == 412)
            // Wrong password and unknown user: the same refusal.
            let other = KontoClient(gatewayURL: gateway.baseURL)
            let wrong = await Self.refusal { _ = try await other.logIn(userId: "ada@example.org", password: "not the password") }
            let unknown = await Self.refusal { _ = try await other.logIn(userId: "nobody@example.org", password: "not the password") }
            #expect(wrong?.code == "account.wrongCredentials")
            #expect(wrong?.status == 401)
            #expect(unknown?.code == wrong?.code)
            try await other.logIn(userId: "ada@example.org", password: "correct horse battery")
            // Security-related: the password again, then the changes.
            try await client.reauthenticate(password: "correct horse battery")
            #expect(try await client.changePassword(to: "a new horse battery") >= 1)
            let ended = await Self.refusal { _ = try await other.account() }
            #expect(ended?.code == "account.unauthenticated")
            try await client.changeUserId(to: "augusta@example.org", currentPassword: "a new horse battery")
            try await other.logIn(userId: "augusta@example.org", password: "a new horse battery")
            account = try await other.account()
            #expect(account.accountId == signedUp.session.accountId)
            #expect(account[\.userId] == "augusta@example.org")
            #expect(try await other.logOutEverywhere() >= 2)
            let loggedOut = await Self.refusal { _ = try await other.account() }
            #expect(loggedOut?.code == KontoClientError.Code.notSignedIn)
            // Deleting: the stored session goes, and the account can no longer log in.
            // With the current password the deletion needs no privileged window; a wrong one deletes nothing.
            try await other.logIn(userId: "augusta@example.org", password: "a new horse battery")
            let wrongCurrent = await Self.refusal { try await other.deleteAccount(currentPassword: "not the password") }
            #expect(wrongCurrent?.code == "account.wrongCredentials")
            #expect(try await other.account().accountId == signedUp.session.accountId)
            try await other.deleteAccount(currentPassword: "a new horse battery")
            #expect(try await other.currentSession() == nil)
            let deleted = await Self.refusal { _ = try await other.logIn(userId: "augusta@example.org", password: "a new horse battery") }
            #expect(deleted?.code == "account.wrongCredentials")
        }
    }

    @Test("sessions and devices: each client's session listed with its name and network, this one marked; another ended with the password (its next call refused at once), every other ended, this one ended as a logout")
    func devices() async throws {
        try await Harness.withGateway { gateway in
            let phone = KontoClient(gatewayURL: gateway.baseURL, clientName: "Spezi Study on Ada's iPhone")
            let laptop = KontoClient(gatewayURL: gateway.baseURL, clientName: "Konto console on Ada's laptop")
            let tablet = KontoClient(gatewayURL: gateway.baseURL)
            try await phone.signUp(userId: "ada@example.org", password: "correct horse battery", details: Self.named("Ada"))
            try await laptop.logIn(userId: "ada@example.org", password: "correct horse battery")
            try await tablet.logIn(userId: "ada@example.org", password: "correct horse battery")

            let listed = try await laptop.deviceSessions()
            #expect(listed.map(\.clientName) == ["Spezi Study on Ada's iPhone", "Konto console on Ada's laptop", KontoClient.defaultClientName])
            #expect(listed.map(\.isCurrent) == [false, true, false])
            #expect(listed.map(\.signInMethod) == ["signUp", "password", "password"])
            #expect(listed.allSatisfy { $0.clientAddress == "127.0.0.0/24" && $0.lastUsedAt != nil })

            // Another session: a wrong password ends nothing; the right one ends it, and its next call is refused.
            let wrong = await Self.refusal { try await laptop.endSession(id: listed[0].id, currentPassword: "not the password") }
            #expect(wrong?.code == "account.wrongCredentials" && wrong?.status == 401)
            #expect(try await phone.account().accountId == laptop.account().accountId)
            try await laptop.endSession(id: listed[0].id, currentPassword: "correct horse battery")
            let ended = await Self.refusal { _ = try await phone.account() }
            #expect(ended?.code == "account.unauthenticated")
            #expect(try await laptop.currentSession() != nil)
            let unknown = await Self.refusal { try await laptop.endSession(id: listed[0].id, currentPassword: "correct horse battery") }
            #expect(unknown?.code == "account.sessionNotFound" && unknown?.status == 404)

            // Every other: the tablet's goes, the laptop's stays.
            #expect(try await laptop.endOtherSessions(currentPassword: "correct horse battery") == 1)
            #expect(await Self.refusal { _ = try await tablet.account() }?.code == "account.unauthenticated")
            let left = try await laptop.deviceSessions()
            #expect(left.map(\.id) == [listed[1].id])

            // The mail it may turn off: on by default; off within the login's window.
            #expect(try await laptop.mailPreferences() == KontoMailPreferences(newSignIn: true))
            #expect(try await laptop.setMailPreferences(newSignIn: false).newSignIn == false)
            #expect(try await laptop.mailPreferences().newSignIn == false)

            // A copy of the account's data, within the login's window: this device's session alone is left.
            let copy = try #require(try JSONSerialization.jsonObject(with: try await laptop.exportAccount()) as? [String: Any])
            #expect((copy["credential"] as? [String: Any])?["userId"] as? String == "ada@example.org")
            #expect((copy["sessions"] as? [[String: Any]])?.map { $0["clientName"] as? String } == ["Konto console on Ada's laptop"])
            #expect((copy["mailPreferences"] as? [String: Any])?["newSignIn"] as? Bool == false)
            #expect(await Self.refusal { _ = try await tablet.exportAccount() }?.code == "account.unauthenticated")

            // Its own: a logout, no password; the stored session is forgotten.
            try await laptop.endSession(id: listed[1].id)
            #expect(try await laptop.currentSession() == nil)
        }
    }

    @Test("refusals carry the API's codes and per-field errors; anonymous accounts keep their id when they sign up; the schema reads")
    func refusalsAnonymousAndSchema() async throws {
        try await Harness.withGateway { gateway in
            let client = KontoClient(gatewayURL: gateway.baseURL)
            let notSignedIn = await Self.refusal { _ = try await client.account() }
            #expect(notSignedIn?.code == KontoClientError.Code.notSignedIn)
            let weak = await Self.refusal { _ = try await client.signUp(userId: "not an email", password: "short") }
            #expect(weak?.code == "account.validationFailed")
            #expect(weak?.status == 422)
            #expect(Set(weak?.fields.map(\.key) ?? []) == ["userId", "password", "name"])
            try await client.signUp(userId: "grace@example.org", password: "correct horse battery", details: Self.named("Grace"))
            let taken = await Self.refusal { _ = try await KontoClient(gatewayURL: gateway.baseURL).signUp(userId: "grace@example.org", password: "correct horse battery", details: Self.named("Grace")) }
            #expect(taken?.code == "account.credentialsTaken")
            #expect(taken?.status == 409)
            try await client.requestPasswordReset(userId: "grace@example.org")
            try await client.requestPasswordReset(userId: "nobody@example.org")
            let badReset = await Self.refusal { try await client.confirmPasswordReset(token: "not a token", newPassword: "another horse battery") }
            #expect(badReset?.code == "account.invalidResetToken")

            let anonymous = KontoClient(gatewayURL: gateway.baseURL)
            let guest = try await anonymous.signInAnonymously()
            #expect(try await anonymous.account().isAnonymous)
            let upgraded = try await anonymous.signUp(userId: "hopper@example.org", password: "correct horse battery", details: Self.named("Grace"))
            #expect(upgraded.session.accountId == guest.session.accountId)
            #expect(try await anonymous.account().isAnonymous == false)

            let schema = try await client.schema()
            #expect(schema.userIdType == .emailAddress)
            let published = try #require(try await gateway.request(.GET, "/v1/schema").object["keys"] as? [[String: Any]])
            #expect(!schema.keys.isEmpty)
            #expect(schema.keys.map(\.identifier) == published.compactMap { $0["identifier"] as? String })
            #expect(schema.keys.map(\.requirement.rawValue) == published.compactMap { $0["requirement"] as? String })
        }
    }

    @Test("the account's events as an AsyncSequence: from when it opened (not the sign-up's), resumed after an id, ending with the session")
    func events() async throws {
        try await Harness.withGateway { gateway in
            // async-http-client: on Linux, URLSession buffers a whole answer, so a stream that lasts never arrives.
            let client = KontoClient(gatewayURL: gateway.baseURL, httpClient: .shared)
            let signedUp = try await client.signUp(userId: "ada@example.org", password: "correct horse battery", details: Self.named("Augusta"))
            // Open once events() returned: the two changes made after it are shown. The sign-up's associatedAccount
            // may lead (it reaches Notifications a moment after the sign-up answered); GatewayEventStreamTests checks
            // that history is not shown.
            let stream = try await client.events()
            for givenName in ["Ada", "Augusta Ada"] {
                var change = AccountDetails()
                change[\.name] = PersonName(givenName: givenName)
                try await client.modify(set: change)
            }
            var seen: [KontoEvent] = []
            for try await event in stream {
                seen.append(event)
                if seen.filter({ $0.type == "detailsChanged" }).count == 2 { break }
            }
            // The sign-up's associatedAccount comes through Identity's outbox, the changes through Profile's: under
            // load it may arrive between them, so only its presence (at most once) is free, not its place.
            #expect(seen.filter { $0.type == "detailsChanged" }.count == 2, "\(seen.map(\.type))")
            #expect(seen.filter { $0.type != "detailsChanged" }.map(\.type).allSatisfy { $0 == "associatedAccount" } && seen.count <= 3, "\(seen.map(\.type))")
            #expect(seen.allSatisfy { $0.accountEvent?.accountId == signedUp.session.accountId })
            // Thin: the changed key, and the details fetched.
            #expect(seen.last?.accountEvent?.kind == .detailsChanged(keys: ["name"]), "\(seen.last?.data ?? "")")
            #expect(try await client.account().details[\.name]?.givenName == "Augusta Ada")
            // Resumed after the first change: the second again; then a logout ends the stream.
            let resumed = try await client.events(after: seen[seen.count - 2].id)
            var iterator = resumed.makeAsyncIterator()
            #expect(try await iterator.next()?.id == seen[seen.count - 1].id)
            try await client.logOut()
            var rest: [String] = []
            while let event = try await iterator.next() { rest.append(event.type) }
            #expect(rest == ["disassociatingAccount"])
            // Without a session, and with an ended one: refused.
            let refused = await Self.refusal { _ = try await client.events() }
            #expect(refused?.code == KontoClientError.Code.notSignedIn)
        }
    }

    @Test("a gateway that is not there is one clear error, not a hang")
    func unreachable() async throws {
        let port = try FreePort.loopback()
        // async-http-client retries a refused connection until the exchange's deadline: 3 s here, not the default 30.
        let client = KontoClient(gatewayURL: "http://127.0.0.1:\(port)", timeout: .seconds(3))
        let error = await Self.refusal { _ = try await client.logIn(userId: "ada@example.org", password: "correct horse battery") }
        #expect(error?.code == KontoClientError.Code.unreachable)
        #expect(error?.status == 0)
    }

    /// Answers every request with one canned response, and remembers what it was asked.
    final class CannedTransport: ClientTransport, Sendable {
        let status: Int
        let headers: HTTPFields
        let body: String
        let asked = Mutex<[HTTPRequest]>([])

        init(status: Int = 200, headers: HTTPFields = [:], body: String) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        func send(_ request: HTTPRequest, body requestBody: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
            asked.withLock { $0.append(request) }
            return (HTTPResponse(status: .init(code: status), headerFields: headers), HTTPBody(body))
        }
    }

    static let problemJSON: HTTPFields = [.contentType: "application/problem+json"]
    static let json: HTTPFields = [.contentType: "application/json"]
    static let base = URL(string: "http://gateway.test")!

    @Test("a throttled answer's Retry-After and request id are kept; an answer that is no problem document is named so")
    func decoding() async throws {
        let problem = #"{"type":"/problems/account.throttled","title":"Too Many Requests","status":429,"detail":"Too many failed logins.","code":"account.throttled","requestId":"r-1"}"#
        var headers = Self.problemJSON
        headers[.retryAfter] = "42"
        let throttled = KontoClient(gatewayURL: Self.base, transport: CannedTransport(status: 429, headers: headers, body: problem))
        let error = await Self.refusal { _ = try await throttled.logIn(userId: "ada@example.org", password: "correct horse battery") }
        #expect(error == KontoClientError(code: "account.throttled", status: 429, detail: "Too many failed logins.", retryAfter: 42, requestId: "r-1"))
        let garbled = KontoClient(gatewayURL: Self.base, transport: CannedTransport(status: 502, headers: [.contentType: "text/html"], body: "<html>bad gateway</html>"))
        let bad = await Self.refusal { _ = try await garbled.logIn(userId: "a@b.c", password: "whatever password") }
        #expect(bad?.code == KontoClientError.Code.unexpectedAnswer)
        #expect(bad?.status == 502)
        let wrongShape = KontoClient(gatewayURL: Self.base, transport: CannedTransport(headers: Self.json, body: #"{"accountId":1}"#))
        #expect(await Self.refusal { _ = try await wrongShape.logIn(userId: "a@b.c", password: "whatever password") }?.code == KontoClientError.Code.unexpectedAnswer)
        // A field error's code and message survive.
        let invalid = #"{"type":"about:blank","title":"Unprocessable","status":422,"code":"account.validationFailed","errors":[{"key":"password","code":"tooShort","message":"too short"}]}"#
        let refused = KontoClient(gatewayURL: Self.base, transport: CannedTransport(status: 422, headers: Self.problemJSON, body: invalid))
        let fields = await Self.refusal { _ = try await refused.signUp(userId: "a@b.c", password: "x") }?.fields
        #expect(fields == [AccountFieldError(key: "password", code: AccountFieldError.Code(rawValue: "tooShort"), message: "too short")])
    }

    @Test("a session's token is presented as a bearer token, and only on the calls made with it")
    func bearerToken() async throws {
        let sessions = InMemorySessionStore(KontoSession(accountId: "a-1", token: "the-token", expiresAt: .distantFuture))
        let ending = CannedTransport(status: 204, body: "")
        try await KontoClient(gatewayURL: Self.base, transport: ending, sessions: sessions).logOut()
        let loggedOut = try #require(ending.asked.withLock { $0.first })
        #expect(loggedOut.method == .delete && loggedOut.path == "/v1/sessions/current")
        #expect(loggedOut.headerFields[.authorization] == "Bearer the-token")
        // A call without a session's token presents none, even with a session stored.
        await sessions.save(KontoSession(accountId: "a-1", token: "the-token", expiresAt: .distantFuture))
        let accepting = CannedTransport(status: 202, headers: Self.json, body: "{}")
        try await KontoClient(gatewayURL: Self.base, transport: accepting, sessions: sessions).requestPasswordReset(userId: "ada@example.org")
        let reset = try #require(accepting.asked.withLock { $0.first })
        #expect(reset.path == "/v1/password-resets")
        #expect(reset.headerFields[.authorization] == nil)
    }

    @Test("answers are read no further than the client's bound; an event stream's lines are bounded, not its length")
    func bounds() async throws {
        let big = #"{"userIdType":"emailAddress","keys":[],"padding":""# + String(repeating: "x", count: 10_000) + #""}"#
        let bounded = KontoClient(gatewayURL: Self.base, transport: CannedTransport(headers: Self.json, body: big), maximumResponseBytes: 4_096)
        let tooBig = await Self.refusal { _ = try await bounded.schema() }
        #expect(tooBig?.code == KontoClientError.Code.unexpectedAnswer)
        let roomy = KontoClient(gatewayURL: Self.base, transport: CannedTransport(headers: Self.json, body: big), maximumResponseBytes: 64 * 1024)
        #expect(try await roomy.schema().keys.isEmpty)

        // Many events, far beyond the response bound, arrive; one endless line does not.
        let session = KontoSession(accountId: "a-1", token: "t", expiresAt: .distantFuture)
        let events = (1...100).map { "id: \($0)\nevent: detailsChanged\ndata: {\"n\":\($0)}\n\n" }.joined()
        let streamed = KontoClient(
            gatewayURL: Self.base, transport: CannedTransport(headers: [.contentType: "text/event-stream"], body: ": heartbeat\n\n" + events),
            sessions: InMemorySessionStore(session), maximumResponseBytes: 1_024
        )
        var seen: [String] = []
        for try await event in try await streamed.events() { seen.append(event.id) }
        #expect(seen == (1...100).map(String.init))
        let endless = KontoClient(
            gatewayURL: Self.base, transport: CannedTransport(headers: [.contentType: "text/event-stream"], body: "data: " + String(repeating: "x", count: (1 << 20) + 10)),
            sessions: InMemorySessionStore(session)
        )
        let broken = await Self.refusal { for try await _ in try await endless.events() {} }
        #expect(broken?.code == KontoClientError.Code.unreachable)
    }

    @Test("a gateway URL that is none is one clear error")
    func notAURL() async throws {
        let client = KontoClient(gatewayURL: "not a url")
        let error = await Self.refusal { _ = try await client.logIn(userId: "ada@example.org", password: "correct horse battery") }
        #expect(error?.code == KontoClientError.Code.unreachable)
        #expect(error?.detail?.contains("not a gateway URL") == true)
    }
}

import Foundation
import GatewayService
import KontoTesting
import NIOHTTP1
import Testing

/// Every route through a running gateway with the real services behind it (PostgreSQL): answers, status codes,
/// problem documents and headers, success and failure paths.
@Suite("Gateway routes", .serialized)
struct GatewayRouteTests {
    @Test("sign-up, login, read, modify with If-Match, logout: the account's life through the API")
    func accountJourney() async throws {
        try await GatewayHarness.withGateway { gateway in
            let (token, accountId) = try await gateway.signUp("ada@example.org", details: #"{"name":{"givenName":"Ada","familyName":"Lovelace"}}"#)

            let account = try await gateway.request(.GET, "/v1/account", token: token)
            #expect(account.status == 200)
            #expect(account.object["accountId"] as? String == accountId)
            let details = try #require(account.object["details"] as? [String: Any])
            #expect((details["name"] as? [String: Any])?["givenName"] as? String == "Ada")
            #expect(details["password"] == nil)
            let etag = try #require(account.headers.first(name: "ETag"))

            let modified = try await gateway.request(.PATCH, "/v1/account", json: #"{"set":{"email":"ada@example.org"}}"#, token: token, headers: [("If-Match", etag)])
            #expect(modified.status == 200)
            #expect((modified.object["details"] as? [String: Any])?["email"] as? String == "ada@example.org")
            #expect(modified.headers.first(name: "ETag") != etag)

            // The old version no longer matches.
            let stale = try await gateway.request(.PATCH, "/v1/account", json: #"{"remove":["email"]}"#, token: token, headers: [("If-Match", etag)])
            #expect(stale.status == 412)
            #expect(stale.code == "account.versionConflict")
            #expect(stale.contentType == "application/problem+json")

            let login = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"ada@example.org","password":"correct horse battery"}"#)
            #expect(login.status == 200)
            #expect(login.object["accountId"] as? String == accountId)

            let logout = try await gateway.request(.DELETE, "/v1/sessions/current", token: token)
            #expect(logout.status == 204)
            // Revocation takes effect on the very next request.
            let after = try await gateway.request(.GET, "/v1/account", token: token)
            #expect(after.status == 401)
            #expect(after.code == "account.unauthenticated")
            #expect(after.headers.first(name: "WWW-Authenticate") == "Bearer")
        }
    }

    @Test("credentials change only through their own routes; If-Match must be an ETag; an unknown key is not removed")
    func modificationRefusals() async throws {
        try await GatewayHarness.withGateway { gateway in
            let (token, _) = try await gateway.signUp("hedy@example.org")
            for body in [#"{"set":{"password":"sneaky new password"}}"#, #"{"set":{"userId":"other@example.org"}}"#, #"{"remove":["password"]}"#] {
                let answer = try await gateway.request(.PATCH, "/v1/account", json: body, token: token)
                #expect(answer.status == 422, "\(body)")
                #expect((answer.object["errors"] as? [[String: Any]])?.first?["code"] as? String == "credentialNotAccepted", "\(body)")
            }
            let unknown = try await gateway.request(.PATCH, "/v1/account", json: #"{"remove":["shoeSize"]}"#, token: token)
            #expect(unknown.status == 422)
            #expect((unknown.object["errors"] as? [[String: Any]])?.first?["code"] as? String == "unknownKey")
            for ifMatch in ["1", "\"one\"", "{}"] {
                let answer = try await gateway.request(.PATCH, "/v1/account", json: #"{"set":{}}"#, token: token, headers: [("If-Match", ifMatch)])
                #expect(answer.status == 400, "If-Match: \(ifMatch)")
            }
            #expect(try await gateway.request(.PATCH, "/v1/account", json: #"{"set":{}}"#, token: token, headers: [("If-Match", "W/\"1\"")]).status == 200)
            // The login still works with the password from sign-up.
            #expect(try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"hedy@example.org","password":"correct horse battery"}"#).status == 200)
        }
    }

    @Test("signing up with the session of an account that has credentials is 409")
    func alreadySignedUp() async throws {
        try await GatewayHarness.withGateway { gateway in
            let (token, _) = try await gateway.signUp("emmy@example.org")
            let again = try await gateway.request(.POST, "/v1/accounts", json: #"{"userId":"noether@example.org","password":"correct horse battery","details":{"name":{"givenName":"Noether"}}}"#, token: token)
            #expect(again.status == 409)
            #expect(again.code == "account.alreadySignedUp")
        }
    }

    @Test("the root says where the console and the API document are; a problem's type is a page explaining its code")
    func rootAndProblemTypes() async throws {
        try await GatewayHarness.withGateway { gateway in
            let root = try await gateway.request(.GET, "/")
            #expect(root.status == 200)
            #expect(root.object["console"] as? String == "/account/" && root.object["openapi"] as? String == "/openapi.json", "\(root.text)")
            // A problem's type leads to its explanation.
            let wrong = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"nobody@example.org","password":"not a password"}"#)
            let type = try #require(wrong.object["type"] as? String)
            #expect(type == "/problems/account.wrongCredentials")
            let page = try await gateway.request(.GET, type)
            #expect(page.status == 200)
            #expect(page.text.contains("HTTP 401 Unauthorized") && page.text.contains("The user identifier or password is wrong."), "\(page.text)")
            let limited = try await gateway.request(.GET, "/problems/request.rateLimited")
            #expect(limited.text.contains("HTTP 429 Too Many Requests") && limited.text.contains("may succeed later"), "\(limited.text)")
            // The status line says what the title says (read as sent, by curl).
            for (body, status) in [(#"{"userId":"ada@example.org","password":"correct horse battery","details":{}}"#, 422), ("{", 400)] {
                let run = try await ServiceProcess.run("/bin/bash", arguments: [
                    "-c", "curl -si \(gateway.baseURL)/v1/accounts -H 'Content-Type: application/json' --data-binary \"$1\"", "curl", body,
                ])
                let lines = run.standardOutput.components(separatedBy: "\r\n")
                let title = try #require(run.standardOutput.firstMatch(of: /"title":"([^"]+)"/)?.output.1, "\(run.standardOutput) \(run.standardError)")
                #expect(lines.first == "HTTP/1.1 \(status) \(title)", "\(lines.first ?? "")")
            }
            // Only codes this build declares; the path is never written back.
            let unknown = try await gateway.request(.GET, "/problems/%3Cscript%3E")
            #expect(unknown.status == 404 && unknown.code == "request.notFound" && !unknown.text.contains("<script>"))
        }
    }

    @Test("a wrong password and an unknown user get the same 401 problem")
    func noEnumeration() async throws {
        try await GatewayHarness.withGateway { gateway in
            _ = try await gateway.signUp("grace@example.org")
            let wrong = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"grace@example.org","password":"not her password"}"#)
            let unknown = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"nobody@example.org","password":"not her password"}"#)
            #expect(wrong.status == 401)
            #expect(wrong.code == "account.wrongCredentials")
            var wrongObject = wrong.object, unknownObject = unknown.object
            wrongObject["requestId"] = nil
            unknownObject["requestId"] = nil
            #expect(NSDictionary(dictionary: wrongObject) == NSDictionary(dictionary: unknownObject))
            #expect(unknown.status == 401)
        }
    }

    @Test("a taken userId is 409, invalid details 422 with per-field errors")
    func signUpRefusals() async throws {
        try await GatewayHarness.withGateway { gateway in
            _ = try await gateway.signUp("alan@example.org")
            let taken = try await gateway.request(.POST, "/v1/accounts", json: #"{"userId":"alan@example.org","password":"correct horse battery","details":{"name":{"givenName":"Alan"}}}"#)
            #expect(taken.status == 409)
            #expect(taken.code == "account.credentialsTaken")

            let invalid = try await gateway.request(.POST, "/v1/accounts", json: #"{"userId":"edsger@example.org","password":"correct horse battery","details":{"dateOfBirth":42,"nonsense":true}}"#)
            #expect(invalid.status == 422)
            #expect(invalid.code == "account.validationFailed")
            let fields = (invalid.object["errors"] as? [[String: Any]] ?? []).compactMap { $0["key"] as? String }
            #expect(Set(fields) == ["name", "dateOfBirth", "nonsense"])
        }
    }

    @Test("malformed JSON is 400 naming the problem, a wrong content type 415, a large body 413, an unknown route 404")
    func inputHygiene() async throws {
        try await GatewayHarness.withGateway(configure: { $0.maximumBodyBytes = 4_096 }) { gateway in
            let malformed = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId": "#)
            #expect(malformed.status == 400)
            #expect(malformed.code == "request.malformed")

            // No body at all where one is required (the transport hands the handlers none: AbsentBodyMiddleware).
            let bodiless = try await gateway.request(.POST, "/v1/sessions")
            #expect(bodiless.status == 400)
            #expect(bodiless.code == "request.malformed")

            let missing = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"a@example.org"}"#)
            #expect(missing.status == 400)
            #expect((missing.object["detail"] as? String)?.contains("password") == true)

            let wrongType = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"a@example.org","password":7}"#)
            #expect(wrongType.status == 400)
            #expect((wrongType.object["detail"] as? String)?.contains("password") == true)

            let text = try await gateway.request(.POST, "/v1/sessions", json: "userId=a", headers: [("Content-Type", "text/plain")])
            #expect(text.status == 415)
            #expect(text.code == "request.unsupportedMediaType")

            let large = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"\#(String(repeating: "a", count: 5_000))","password":"x"}"#)
            #expect(large.status == 413)
            #expect(large.code == "request.bodyTooLarge")

            let wrongMethod = try await gateway.request(.DELETE, "/v1/schema")
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.headers.first(name: "Allow") == "GET")
            #expect(wrongMethod.code == "request.methodNotAllowed")

            let unknown = try await gateway.request(.GET, "/v1/nothing-here")
            #expect(unknown.status == 404)
            #expect(unknown.contentType == "application/problem+json")
        }
    }

    @Test("routes that take a session refuse a missing or unknown token with 401")
    func authenticationRequired() async throws {
        try await GatewayHarness.withGateway { gateway in
            let routes: [(HTTPMethodName, String, String?)] = [
                (.GET, "/v1/account", nil),
                (.PATCH, "/v1/account", #"{"set":{}}"#),
                (.DELETE, "/v1/account", nil),
                (.PUT, "/v1/account/password", #"{"newPassword":"another horse battery"}"#),
                (.PUT, "/v1/account/user-id", #"{"userId":"new@example.org"}"#),
                (.POST, "/v1/account/reauthenticate", #"{"password":"x"}"#),
                (.DELETE, "/v1/sessions/current", nil),
                (.DELETE, "/v1/sessions", nil),
            ]
            for (method, path, body) in routes {
                for token in [nil, "not-a-session-token"] {
                    let answer = try await gateway.request(method.nio, path, json: body, token: token)
                    #expect(answer.status == 401, "\(method) \(path) with \(token == nil ? "no" : "an unknown") token")
                    #expect(answer.code == "account.unauthenticated", "\(method) \(path)")
                }
            }
        }
    }

    @Test("security-related changes need a recent authentication or the current password; a password change ends the other sessions")
    func securityRelated() async throws {
        try await GatewayHarness.withGateway { gateway in
            let (previous, _) = try await gateway.signUp("barbara@example.org")
            var token = previous
            let other = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"barbara@example.org","password":"correct horse battery"}"#)
            let otherToken = try #require((other.object["session"] as? [String: Any])?["token"] as? String)

            let wrong = try await gateway.request(.POST, "/v1/account/reauthenticate", json: #"{"password":"wrong one"}"#, token: token)
            #expect(wrong.status == 401)
            #expect(wrong.code == "account.wrongCredentials")
            // A current password that is given is checked, even within the privileged window.
            let wrongCurrent = try await gateway.request(.PUT, "/v1/account/password", json: #"{"currentPassword":"wrong one","newPassword":"another horse battery"}"#, token: token)
            #expect(wrongCurrent.status == 401)
            #expect(wrongCurrent.code == "account.wrongCredentials")

            let changed = try await gateway.request(.PUT, "/v1/account/password", json: #"{"currentPassword":"correct horse battery","newPassword":"another horse battery"}"#, token: token)
            #expect(changed.status == 200)
            #expect(changed.object["sessionsEnded"] as? Int == 1)
            #expect(try await gateway.request(.GET, "/v1/account", token: otherToken).status == 401)
            #expect(try await gateway.request(.GET, "/v1/account", token: token).status == 200)

            let reauthenticated = try await gateway.request(.POST, "/v1/account/reauthenticate", json: #"{"password":"another horse battery"}"#, token: previous)
            #expect(reauthenticated.status == 200)
            #expect(reauthenticated.object["privilegedUntil"] is String)
            // A fresh token replaces the one presented, which stops working at once.
            token = try #require((reauthenticated.object["session"] as? [String: Any])?["token"] as? String)
            #expect(token != previous)
            #expect(try await gateway.request(.GET, "/v1/account", token: previous).status == 401)

            // The account names its userId (Identity's, beside Profile's details), the new one right after a change.
            let before = try await gateway.request(.GET, "/v1/account", token: token)
            #expect((before.object["details"] as? [String: Any])?["userId"] as? String == "barbara@example.org")
            let renamed = try await gateway.request(.PUT, "/v1/account/user-id", json: #"{"userId":"babs@example.org"}"#, token: token)
            #expect(renamed.status == 204)
            let after = try await gateway.request(.GET, "/v1/account", token: token)
            #expect((after.object["details"] as? [String: Any])?["userId"] as? String == "babs@example.org")
            #expect(try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"babs@example.org","password":"another horse battery"}"#).status == 200)

            // A deletion's current password, when given, is checked too; one that is null counts as absent.
            let wrongDeletion = try await gateway.request(.DELETE, "/v1/account", json: #"{"currentPassword":"wrong one"}"#, token: token)
            #expect(wrongDeletion.status == 401)
            #expect(wrongDeletion.code == "account.wrongCredentials")
            let notJSON = try await gateway.request(.DELETE, "/v1/account", json: "currentPassword=x", token: token, headers: [("Content-Type", "application/x-www-form-urlencoded")])
            #expect(notJSON.status == 415)
            #expect(try await gateway.request(.GET, "/v1/account", token: token).status == 200)
            let deleted = try await gateway.request(.DELETE, "/v1/account", json: #"{"currentPassword":null}"#, token: token)
            #expect(deleted.status == 204)
            #expect(try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"babs@example.org","password":"another horse battery"}"#).status == 401)
        }
    }

    @Test("anonymous sign-in, password reset answers, schema, health, request ids")
    func otherRoutes() async throws {
        try await GatewayHarness.withGateway { gateway in
            let anonymous = try await gateway.request(.POST, "/v1/sessions/anonymous")
            #expect(anonymous.status == 201)
            let anonymousToken = try #require((anonymous.object["session"] as? [String: Any])?["token"] as? String)
            let anonymousId = try #require(anonymous.object["accountId"] as? String)
            let anonymousAccount = try await gateway.request(.GET, "/v1/account", token: anonymousToken)
            #expect(anonymousAccount.object["isAnonymous"] as? Bool == true, "\(anonymousAccount.status) \(anonymousAccount.text)")
            #expect((anonymousAccount.object["details"] as? [String: Any])?["userId"] == nil, "an anonymous account has no userId")
            // Signing up with the anonymous session keeps its accountId.
            let upgraded = try await gateway.request(.POST, "/v1/accounts", json: #"{"userId":"anon@example.org","password":"correct horse battery","details":{"name":{"givenName":"Anon"}}}"#, token: anonymousToken)
            #expect(upgraded.status == 201)
            #expect(upgraded.object["accountId"] as? String == anonymousId)

            let known = try await gateway.request(.POST, "/v1/password-resets", json: #"{"userId":"anon@example.org"}"#)
            let unknown = try await gateway.request(.POST, "/v1/password-resets", json: #"{"userId":"nobody@example.org"}"#)
            #expect(known.status == 202)
            #expect(unknown.status == 202)
            #expect(known.body == unknown.body)
            let badToken = try await gateway.request(.POST, "/v1/password-resets/confirm", json: #"{"token":"nope","newPassword":"another horse battery"}"#)
            #expect(badToken.status == 403)
            #expect(badToken.code == "account.invalidResetToken")

            let schema = try await gateway.request(.GET, "/v1/schema")
            #expect(schema.status == 200)
            let keys = (schema.object["keys"] as? [[String: Any]] ?? []).compactMap { $0["identifier"] as? String }
            #expect(keys.first == "userId")
            #expect(keys == ["userId", "password", "name", "dateOfBirth", "genderIdentity"])

            #expect(try await gateway.request(.GET, "/health/live").status == 200)
            let ready = try await gateway.request(.GET, "/health/ready")
            #expect(ready.status == 200)
            #expect(ready.object["status"] as? String == "ok")

            let traced = try await gateway.request(.GET, "/health/live", headers: [("X-Request-ID", "req-123.abc")])
            #expect(traced.headers.first(name: "X-Request-ID") == "req-123.abc")
            let hostile = try await gateway.request(.GET, "/health/live", headers: [("X-Request-ID", "bad id with spaces")])
            let generated = try #require(hostile.headers.first(name: "X-Request-ID"))
            #expect(generated != "bad id with spaces")
            #expect(UUID(uuidString: generated) != nil)
        }
    }

    @Test("with Profile unreachable, account reads answer 503 with Retry-After within the deadline")
    func profileDown() async throws {
        try await GatewayHarness.withGateway(configure: { configuration in
            // A port nothing listens on.
            configuration.profile = .init(host: "127.0.0.1", port: 1)
            configuration.upstreamTimeout = .seconds(2)
        }) { gateway in
            let (token, _) = try await gateway.signUp("kathleen@example.org")
            let start = ContinuousClock.now
            let answer = try await gateway.request(.GET, "/v1/account", token: token)
            #expect(answer.status == 503)
            #expect(answer.headers.first(name: "Retry-After") != nil)
            #expect(answer.code == "gateway.serviceUnavailable")
            #expect(ContinuousClock.now - start < .seconds(10))
            let ready = try await gateway.request(.GET, "/health/ready")
            #expect(ready.status == 503)
            #expect((ready.object["services"] as? [String: String])?["profile"] == "unavailable")
        }
    }
}

enum HTTPMethodName: String, CustomStringConvertible {
    case GET, POST, PUT, PATCH, DELETE
    var description: String { rawValue }
    var nio: HTTPMethod { HTTPMethod(rawValue: rawValue) }
}

import Foundation
@testable import GatewayService
import HTTPTypes
import KontoContracts
import KontoModel
import KontoTesting
import KontoWire
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

/// The gateway's wire clients as consumers of the Identity and Profile contracts: for every recorded example an
/// HTTP request can lead to, the gateway sends exactly the recorded request (stand-in services record what they
/// receive) and answers the recorded response or error with the status the catalog gives it.
@Suite("Gateway as a consumer of the Identity and Profile contracts", .serialized)
struct GatewayContractConsumerTests {
    /// A stand-in service: answers one method from the example being played, the others from fixed answers; keeps
    /// what the played method received.
    final class StandIn: Sendable {
        private let state = Mutex<(example: ContractExample?, received: [String])>((nil, []))
        private let validation = Mutex<String?>(nil)
        let fixed: [String: String]

        init(fixed: [String: String]) {
            self.fixed = fixed
        }

        /// The stand-in Identity validates any token as a session of `accountId` (unless validation is the method played).
        func validateAs(accountId: String?) {
            validation.withLock { $0 = accountId }
        }

        func play(_ example: ContractExample?) {
            state.withLock { $0 = (example, []) }
        }

        var received: [String] { state.withLock { $0.received } }

        func answer(_ method: String, _ payload: ByteBuffer) throws -> ByteBuffer {
            let example = try state.withLock { state -> ContractExample? in
                guard let example = state.example, example.method == method else { return nil }
                state.received.append(try ContractExample.canonical(json: payload.readableBytesView))
                return example
            }
            guard let example else {
                if method == IdentityContract.validateSession.name, let accountId = validation.withLock({ $0 }) {
                    let now = Timestamp(Date())
                    let info = IdentitySessionInfo(account: IdentityAccountFacts(accountId: accountId, userId: "user@example.org", isAnonymous: false), sessionId: "session-0", expiresAt: now, privilegedUntil: nil)
                    return ByteBuffer(bytes: try JSONEncoder().encode(info))
                }
                guard let answer = fixed[method] else { throw WireError(code: KontoErrorCode(rawValue: "test.unexpected"), message: "no answer for \(method)") }
                return ByteBuffer(string: answer)
            }
            if let error = example.error {
                throw WireError(code: error.code, message: "recorded", isRetryable: error.retryable, details: error.details.map { Array($0.utf8) } ?? [])
            }
            return ByteBuffer(string: example.response ?? "{}")
        }
    }

    static let health = #"{"service":"stand-in","checks":[{"name":"storage","status":"ready"}]}"#

    /// The statuses the served document declares one by one (the others fall under each operation's `default`).
    static let declaredStatuses: Set<Int> = [401, 403, 404, 409, 412, 422, 429]

    /// The description of the problem response `document` declares for `status` at the operation a request matches.
    static func problemResponse(_ document: [String: Any], method: HTTPMethod, path: String, status: Int) -> String? {
        let paths = document["paths"] as? [String: Any] ?? [:]
        // The gateway's own matching (a literal path before a template it also fits).
        let template = OpenAPIDocument.template(matching: String(path.prefix { $0 != "?" }))
        guard let template, let item = paths[template] as? [String: Any],
              let operation = item[method.rawValue.lowercased()] as? [String: Any],
              let responses = operation["responses"] as? [String: Any],
              let response = responses[String(status)] as? [String: Any],
              let schema = ((response["content"] as? [String: Any])?["application/problem+json"] as? [String: Any])?["schema"] as? [String: Any],
              schema["$ref"] as? String == "#/components/schemas/Problem"
        else { return nil }
        return response["description"] as? String
    }

    /// The HTTP request that makes the gateway send `example`'s request, if one does.
    static func httpRequest(for example: ContractExample) throws -> (HTTPMethod, String, json: String?, token: String?, headers: [(String, String)])? {
        let request = try #require(try JSONSerialization.jsonObject(with: Data(example.request.utf8)) as? [String: Any])
        func body(_ keys: [String]) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: request.filter { keys.contains($0.key) }), as: UTF8.self)
        }
        // The wire's `redirectURI` is the HTTP API's `redirectUri`.
        func renamed(_ keys: [String]) throws -> String {
            let fields = Dictionary(uniqueKeysWithValues: request.filter { keys.contains($0.key) }.map { ($0.key == "redirectURI" ? "redirectUri" : $0.key, $0.value) })
            return String(decoding: try JSONSerialization.data(withJSONObject: fields), as: UTF8.self)
        }
        let externalKeys = ["provider", "idToken", "nonce", "authorizationCode", "codeVerifier", "redirectURI"]
        let token = request["token"] as? String
        var headers: [(String, String)] = []
        if let address = request["clientAddress"] as? String { headers.append(("X-Forwarded-For", address)) }
        if let name = request["clientName"] as? String { headers.append(("User-Agent", name)) }
        switch example.method {
        case IdentityContract.signUp.name:
            return (.POST, "/v1/accounts", try body(["userId", "password", "details"]), request["anonymousSession"] as? String, headers)
        case IdentityContract.login.name:
            return (.POST, "/v1/sessions", try body(["userId", "password"]), nil, headers)
        case IdentityContract.signInAnonymously.name:
            return (.POST, "/v1/sessions/anonymous", nil, nil, headers)
        case IdentityContract.validateSession.name:
            return (.GET, "/v1/account", nil, token, headers)
        case IdentityContract.logout.name:
            return (.DELETE, "/v1/sessions/current", nil, token, headers)
        case IdentityContract.logoutEverywhere.name:
            return (.DELETE, "/v1/sessions", nil, token, headers)
        case IdentityContract.listSessions.name:
            return (.GET, "/v1/account/sessions", nil, token, headers)
        case IdentityContract.endSession.name:
            return (.DELETE, "/v1/account/sessions/\(request["sessionId"] ?? "")", try body(["currentPassword"]), token, headers)
        case IdentityContract.endOtherSessions.name:
            return (.DELETE, "/v1/account/sessions", try body(["currentPassword"]), token, headers)
        case IdentityContract.mailPreferences.name:
            return (.GET, "/v1/account/mail-preferences", nil, token, headers)
        case IdentityContract.setMailPreferences.name:
            return (.PUT, "/v1/account/mail-preferences", try body(["newSignIn", "currentPassword"]), token, headers)
        case IdentityContract.openIDKeys.name:
            return (.GET, "/oauth2/jwks", nil, nil, headers)
        case IdentityContract.exportAccount.name:
            // GET has no body: the API's export needs the privileged window, not a password.
            return request["currentPassword"] == nil ? (.GET, "/v1/account/export", nil, token, headers) : nil
        case IdentityContract.reauthenticate.name:
            return (.POST, "/v1/account/reauthenticate", try body(["password", "code", "recoveryCode", "credential"]), token, headers)
        case IdentityContract.completeSecondFactor.name:
            return (.POST, "/v1/sessions/mfa", try body(["challenge", "code", "recoveryCode", "credential"]), nil, headers)
        case IdentityContract.passkeyRegistrationOptions.name:
            return (.POST, "/v1/account/factors/passkeys/options", try body(["currentPassword"]), token, headers)
        case IdentityContract.registerPasskey.name:
            return (.POST, "/v1/account/factors/passkeys", try body(["name", "credential"]), token, headers)
        case IdentityContract.passkeyLoginOptions.name:
            return (.POST, "/v1/sessions/passkey/options", nil, nil, headers)
        case IdentityContract.passkeyLogin.name:
            return (.POST, "/v1/sessions/passkey", try body(["credential"]), nil, headers)
        case IdentityContract.listFactors.name:
            return (.GET, "/v1/account/factors", nil, token, headers)
        case IdentityContract.enrollTOTP.name:
            return (.POST, "/v1/account/factors/totp", try body(["currentPassword"]), token, headers)
        case IdentityContract.confirmTOTP.name:
            return (.POST, "/v1/account/factors/totp/\(request["factorId"] ?? "")/confirm", try body(["code"]), token, headers)
        case IdentityContract.removeFactor.name:
            return (.DELETE, "/v1/account/factors/\(request["factorId"] ?? "")", try body(["currentPassword"]), token, headers)
        case IdentityContract.regenerateRecoveryCodes.name:
            return (.POST, "/v1/account/recovery-codes", try body(["currentPassword"]), token, headers)
        case IdentityContract.changePassword.name:
            return (.PUT, "/v1/account/password", try body(["currentPassword", "newPassword"]), token, headers)
        case IdentityContract.changeUserId.name:
            return (.PUT, "/v1/account/user-id", try body(["userId", "currentPassword"]), token, headers)
        case IdentityContract.requestPasswordReset.name:
            return (.POST, "/v1/password-resets", try body(["userId"]), nil, headers)
        case IdentityContract.confirmPasswordReset.name:
            return (.POST, "/v1/password-resets/confirm", try body(["token", "newPassword"]), nil, headers)
        case IdentityContract.externalLogin.name:
            return (.POST, "/v1/sessions/oidc", try renamed(externalKeys + ["name", "signUpToken", "userId", "details"]), request["anonymousSession"] as? String, headers)
        case IdentityContract.identityProviders.name:
            return (.GET, "/v1/identity-providers", nil, nil, headers)
        case IdentityContract.externalAuthorization.name:
            return (.POST, "/v1/sessions/oidc/authorization", try renamed(["provider", "redirectURI", "state", "nonce", "codeChallenge"]), nil, headers)
        case IdentityContract.linkIdentity.name:
            return (.POST, "/v1/account/identities", try renamed(externalKeys + ["currentPassword"]), token, headers)
        case IdentityContract.listIdentities.name:
            return (.GET, "/v1/account/identities", nil, token, headers)
        case IdentityContract.openIDApplications.name:
            return (.GET, "/v1/account/applications", nil, token, headers)
        case IdentityContract.revokeOpenIDApplication.name:
            return (.DELETE, "/v1/account/applications/\(request["clientId"] ?? "")", nil, token, headers)
        case IdentityContract.unlinkIdentity.name:
            return (.DELETE, "/v1/account/identities/\(request["identityId"] ?? "")", try body(["currentPassword"]), token, headers)
        case IdentityContract.delete.name:
            // The gateway deletes within the privileged window only: it never sends a current password.
            return request["currentPassword"] == nil ? (.DELETE, "/v1/account", nil, token, headers) : nil
        case ProfileContract.load.name:
            // The gateway loads whole accounts only.
            return request["keys"] == nil ? (.GET, "/v1/account", nil, "session-of-\(request["accountId"] ?? "")", headers) : nil
        case ProfileContract.modify.name:
            let modifications = request["modifications"] as? [String: Any] ?? [:]
            let set = modifications["set"] as? [String: Any] ?? [:]
            let remove = modifications["remove"] as? [String] ?? []
            // The gateway refuses credentials in a modification itself (setting or removing them).
            guard set["accountId"] == nil, set["userId"] == nil, set["password"] == nil,
                  !remove.contains("accountId"), !remove.contains("userId"), !remove.contains("password") else { return nil }
            if let version = request["expectedVersion"] as? Int { headers.append(("If-Match", "\"\(version)\"")) }
            let json = String(decoding: try JSONSerialization.data(withJSONObject: modifications), as: UTF8.self)
            return (.PATCH, "/v1/account", json, "session-of-\(request["accountId"] ?? "")", headers)
        case HealthContract.check.name:
            return (.GET, "/health/ready", nil, nil, headers)
        default:
            return nil
        }
    }

    @Test("every example the gateway can produce: the recorded request sent, the recorded answer mapped")
    func replay() async throws {
        let examples = try ContractExample.samples(of: ContractExample.load(service: "identity", contractVersion: IdentityContract.version)).map { ("identity", $0) }
            + ContractExample.samples(of: ContractExample.load(service: "profile", contractVersion: ProfileContract.version)).map { ("profile", $0) }
        // Profile examples need a session: the stand-in Identity names the account from the token.
        let identity = StandIn(fixed: [HealthContract.check.name: Self.health])
        let profile = StandIn(fixed: [
            HealthContract.check.name: Self.health,
            ProfileContract.load.name: #"{"accountId":"account-0","details":{},"version":1}"#,
        ])
        let notifications = StandIn(fixed: [
            HealthContract.check.name: Self.health,
            NotificationsContract.accountHistory.name: #"{"events":[],"complete":true}"#,
        ])
        let servers = [
            (IdentityContract.serviceName, IdentityContract.methods, identity), (ProfileContract.serviceName, ProfileContract.methods, profile),
            (NotificationsContract.serviceName, NotificationsContract.methods, notifications),
        ].map { name, methods, standIn in
            // Under the real service's name: the gateway's handshake is proven under its verifier at that service.
            let server = WireServer(configuration: WireServer.Configuration(port: 0, serverName: name, secret: WireSecret(GatewayHarness.secret)), logger: GatewayHarness.logger)
            for method in methods {
                server.registerRaw(method) { payload, _ in try standIn.answer(method, payload) }
            }
            return server
        }
        let checked = try await RunningServices.with(servers, logger: GatewayHarness.logger) {
            var configuration = GatewayConfiguration(
                port: 0,
                secret: WireSecret(GatewayHarness.secret),
                identity: .init(host: "127.0.0.1", port: try await servers[0].localAddress().port!),
                profile: .init(host: "127.0.0.1", port: try await servers[1].localAddress().port!),
                notifications: .init(host: "127.0.0.1", port: try await servers[2].localAddress().port!)
            )
            configuration.clientAddressHeader = "X-Forwarded-For"
            configuration.trustedProxies = GatewayLimitsTests.loopback
            configuration.rateLimitPerMinute = 0
            configuration.credentialsRateLimitPerMinute = 0
            return try await GatewayHarness.withGateway(configuration) { gateway in
                let document = try #require(try JSONSerialization.jsonObject(with: Data(try await gateway.request(.GET, "/openapi.json").text.utf8)) as? [String: Any])
                var checked = 0
                for (service, example) in examples where example.consumerProduces {
                    guard let (method, path, json, token, headers) = try Self.httpRequest(for: example) else { continue }
                    let standIn = service == "identity" ? identity : profile
                    standIn.play(example)
                    if service == "profile" {
                        let request = try #require(try JSONSerialization.jsonObject(with: Data(example.request.utf8)) as? [String: Any])
                        identity.play(nil)
                        identity.validateAs(accountId: request["accountId"] as? String ?? "")
                    } else {
                        // A call that changes the session's account checks the session first (so the gateway knows
                        // whose cache entries to drop); the recorded method's answer decides.
                        identity.validateAs(accountId: "account-0")
                    }
                    let answer = try await gateway.request(method, path, json: json, token: token, headers: headers)
                    checked += 1
                    #expect(standIn.received == [example.request], "\(service)/\(example.name): sent \(standIn.received)")
                    if let error = example.error {
                        let expected = error.code == AccountError.Code.notFound && example.method == ProfileContract.load.name ? 404 : Int(error.code.httpStatus.code)
                        #expect(answer.status == expected, "\(service)/\(example.name): \(answer.status) \(answer.text)")
                        #expect(answer.code == error.code.rawValue, "\(service)/\(example.name)")
                        // The served document declares the refusal, status and code, for a client generated from it.
                        if Self.declaredStatuses.contains(answer.status) {
                            let declared = Self.problemResponse(document, method: method, path: path, status: answer.status)
                            #expect(declared?.contains("`\(error.code.rawValue)`") == true, "\(service)/\(example.name): \(method) \(path) declares \(answer.status) as \(declared ?? "nothing")")
                        }
                    } else {
                        #expect((200..<300).contains(answer.status), "\(service)/\(example.name): \(answer.status) \(answer.text)")
                    }
                }
                return checked
            }
        }
        #expect(checked >= 30)
    }
}

import Foundation
import HTTPTypes
import KontoContracts
import KontoModel
import OpenAPIRuntime

/// The gateway's operations for a caller in the same process (the web console, in GatewayConsole): each goes
/// through the very handler the HTTP API serves, as the session and device the caller names, so the console and the
/// API cannot disagree. The generated HTTP shapes stay inside this target; a caller sees the model's types, and each
/// refusal as the ``GatewayProblem`` the API would have answered (``problem(for:)``).
package struct GatewayOperations: Sendable {
    let api: GatewayAPI
    let rateLimits: GatewayRateLimits

    /// A new session: its bearer token and when it ends.
    package struct NewSession: Sendable, Equatable {
        package var token: String
        package var expiresAt: Date
    }

    // MARK: The current request

    /// Runs `operation` as the session `token` (nil: none) from the browser marked `device`, within the request
    /// being served (its id, client address and logger stay).
    package func asSession<T: Sendable>(_ token: String?, device: String? = nil, _ operation: () async throws -> T) async throws -> T {
        try await RequestScope.asBearer(token, device: device, operation)
    }

    /// The refusal `error` stands for, as the API would answer it (unexpected errors are logged and hidden).
    package func problem(for error: any Error) -> GatewayProblem {
        ProblemMiddleware.problem(for: error, logger: RequestScope.scope.logger)
    }

    /// Takes one of the client address's credential attempts (a form that takes a password or starts a reset); the
    /// refusal, with its Retry-After, when none is left.
    package func credentialAttempt() -> GatewayProblem? {
        guard case .limited(let retryAfter) = rateLimits.checkCredentials(address: RequestScope.scope.clientAddress) else { return nil }
        return GatewayRateLimits.refusal(retryAfter: retryAfter)
    }

    /// Whether the request came through a trusted proxy (whose forwarded headers count).
    package var viaTrustedProxy: Bool { RequestScope.scope.viaTrustedProxy }

    // MARK: Sessions

    /// A login's answer: a session, or (a second factor enrolled) the challenge to complete with a code.
    package enum LogInAnswer: Sendable {
        case signedIn(NewSession)
        /// `passkeyOptions`: with `passkey` among the factors, WebAuthn's request options as JSON for the page.
        case secondFactor(token: String, expiresAt: Date, factors: [String], passkeyOptions: String?)
    }

    package func logIn(userId: String, password: String) async throws -> LogInAnswer {
        switch try await api.logIn(.init(body: .json(.init(userId: userId, password: password)))) {
        case .ok(let ok): .signedIn(Self.session(try ok.body.json.session))
        case .accepted(let accepted): try Self.secondFactor(try accepted.body.json)
        case .default(let status, _): throw GatewayProblem(status: .badGateway, code: .gatewayUpstreamFailed, detail: "The login answered \(status).")
        }
    }

    static func secondFactor(_ answer: Components.Schemas.SecondFactorChallenge) throws -> LogInAnswer {
        let challenge = answer.challenge
        return .secondFactor(token: challenge.token, expiresAt: challenge.expiresAt, factors: challenge.factors, passkeyOptions: try challenge.passkey.map(Self.json))
    }

    package func requestEmailCode(userId: String) async throws {
        _ = try await api.requestEmailCode(.init(body: .json(.init(userId: userId)))).accepted
    }

    package func logIn(userId: String, emailCode: String) async throws -> LogInAnswer {
        switch try await api.logInWithEmailCode(.init(body: .json(.init(userId: userId, code: emailCode)))) {
        case .ok(let ok): .signedIn(Self.session(try ok.body.json.session))
        case .accepted(let accepted): try Self.secondFactor(try accepted.body.json)
        case .default(let status, _): throw GatewayProblem(status: .badGateway, code: .gatewayUpstreamFailed, detail: "The sign-in answered \(status).")
        }
    }

    /// Completes a login with an app's code or a recovery code.
    package func completeSecondFactor(challenge: String, code: String?, recoveryCode: String?) async throws -> NewSession {
        let body = Components.Schemas.SecondFactorLogin(challenge: challenge, code: code, recoveryCode: recoveryCode)
        return Self.session(try await api.completeSecondFactor(.init(body: .json(body))).ok.body.json.session)
    }

    /// Signs up (upgrading the anonymous account whose session is presented, if any).
    package func signUp(userId: String, password: String, details: AccountDetails) async throws -> NewSession {
        try Self.session(try await api.signUp(.init(body: .json(.init(userId: userId, password: password, details: details)))).created.body.json.session)
    }

    package func signInAnonymously() async throws -> NewSession {
        try Self.session(try await api.signInAnonymously(.init()).created.body.json.session)
    }

    package func logOut() async throws {
        _ = try await api.logOut(.init()).noContent
    }

    package func logOutEverywhere() async throws {
        _ = try await api.logOutEverywhere(.init()).ok
    }

    // MARK: The account

    package func account() async throws -> AssembledAccount {
        try await api.getAccount(.init()).ok.body.json
    }

    /// Sets and removes details, refused (`account.versionConflict`) when the account is no longer at `version`.
    package func modify(set: AccountDetails, remove: [String], ifVersion version: Int64) async throws {
        let modifications = Components.Schemas.Modifications(set: set, remove: remove)
        _ = try await api.modifyAccount(.init(headers: .init(ifMatch: GatewayAPI.etag(version)), body: .json(modifications))).ok
    }

    package func changePassword(to newPassword: String, currentPassword: String?) async throws {
        _ = try await api.changePassword(.init(body: .json(.init(currentPassword: currentPassword, newPassword: newPassword)))).ok
    }

    package func changeUserId(to userId: String, currentPassword: String?) async throws {
        _ = try await api.changeUserId(.init(body: .json(.init(userId: userId, currentPassword: currentPassword)))).noContent
    }

    package func deleteAccount(currentPassword: String) async throws {
        try await api.deleteAccount(currentPassword: SecretString(currentPassword))
    }

    // MARK: Password reset

    package func requestPasswordReset(userId: String) async throws {
        _ = try await api.requestPasswordReset(.init(body: .json(.init(userId: userId)))).accepted
    }

    package func confirmPasswordReset(token: String, newPassword: String) async throws {
        _ = try await api.confirmPasswordReset(.init(body: .json(.init(token: token, newPassword: newPassword)))).noContent
    }

    // MARK: Email verification

    package func requestEmailVerification() async throws {
        _ = try await api.requestEmailVerification(.init()).accepted
    }

    package func confirmEmailVerification(token: String) async throws {
        _ = try await api.confirmEmailVerification(.init(body: .json(.init(token: token)))).noContent
    }

    // MARK: Second factors

    /// One of the account's second factors, as a page shows it.
    package struct Factor: Sendable {
        package var id: String
        package var type: String
        package var name: String
        package var createdAt: Date
        package var lastUsedAt: Date?
        package var pending: Bool
        package var remaining: Int?
    }

    package func factors() async throws -> [Factor] {
        try await api.listFactors(.init()).ok.body.json.factors.map {
            Factor(id: $0.id, type: $0._type, name: $0.name, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt, pending: $0.pending, remaining: $0.remaining)
        }
    }

    /// A TOTP enrolment: its id, the secret (base32) and the otpauth URI.
    package func enrollTOTP(currentPassword: String? = nil) async throws -> (factorId: String, secret: String, otpauthURI: String) {
        let body = currentPassword.map { Operations.EnrollTOTP.Input.Body.json(.init(currentPassword: $0)) }
        let enrolment = try await api.enrollTOTP(.init(body: body)).created.body.json
        return (enrolment.factorId, enrolment.secret, enrolment.otpauthUri)
    }

    package func confirmTOTP(factorId: String, code: String) async throws {
        _ = try await api.confirmTOTP(.init(path: .init(factorId: factorId), body: .json(.init(code: code)))).ok
    }

    /// How many second factors are left.
    package func removeFactor(id factorId: String) async throws -> Int {
        try await api.removeFactor(.init(path: .init(factorId: factorId))).ok.body.json.remainingFactors
    }

    package func regenerateRecoveryCodes() async throws -> [String] {
        try await api.regenerateRecoveryCodes(.init()).created.body.json.codes
    }

    /// Opens the privileged window with the password or a code; the fresh session that replaced the presented one.
    package func reauthenticate(password: String?, code: String?, recoveryCode: String?) async throws -> NewSession? {
        let privilege = try await api.reauthenticate(.init(body: .json(.init(password: password, code: code, recoveryCode: recoveryCode)))).ok.body.json
        return privilege.session.map(Self.session)
    }

    // MARK: Passkeys (WebAuthn's JSON forms, as text: the console's page hands them to the browser and back)

    /// Options to make a passkey for the account (security-related), as JSON.
    package func passkeyRegistrationOptions(currentPassword: String? = nil) async throws -> String {
        let body = currentPassword.map { Operations.PasskeyRegistrationOptions.Input.Body.json(.init(currentPassword: $0)) }
        return try Self.json(try await api.passkeyRegistrationOptions(.init(body: body)).ok.body.json)
    }

    /// Registers the passkey the browser made (its RegistrationResponseJSON).
    package func registerPasskey(name: String?, credentialJSON: String) async throws -> Factor {
        let credential = try Self.credential(PasskeyRegistrationCredential.self, credentialJSON)
        let factor = try await api.registerPasskey(.init(body: .json(.init(name: name, credential: credential)))).created.body.json
        return Factor(id: factor.id, type: factor._type, name: factor.name, createdAt: factor.createdAt, lastUsedAt: factor.lastUsedAt, pending: factor.pending, remaining: factor.remaining)
    }

    /// Options to sign in (or reauthenticate) with a passkey, as JSON.
    package func passkeyLoginOptions() async throws -> String {
        try Self.json(try await api.passkeyLoginOptions(.init()).ok.body.json)
    }

    package func passkeyLogIn(credentialJSON: String) async throws -> NewSession {
        let credential = try Self.credential(PasskeyAssertionCredential.self, credentialJSON)
        return Self.session(try await api.passkeyLogIn(.init(body: .json(.init(credential: credential)))).ok.body.json.session)
    }

    /// Completes a login with one of the account's passkeys (its AuthenticationResponseJSON).
    package func completeSecondFactor(challenge: String, passkeyCredentialJSON: String) async throws -> NewSession {
        let credential = try Self.credential(PasskeyAssertionCredential.self, passkeyCredentialJSON)
        let body = Components.Schemas.SecondFactorLogin(challenge: challenge, credential: credential)
        return Self.session(try await api.completeSecondFactor(.init(body: .json(body))).ok.body.json.session)
    }

    /// Opens the privileged window (aal2) with a passkey.
    package func reauthenticate(passkeyCredentialJSON: String) async throws -> NewSession? {
        let credential = try Self.credential(PasskeyAssertionCredential.self, passkeyCredentialJSON)
        let privilege = try await api.reauthenticate(.init(body: .json(.init(credential: credential)))).ok.body.json
        return privilege.session.map(Self.session)
    }

    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
    }

    /// A credential the page sent, bounded and decoded; what the API answers a malformed body with otherwise.
    private static func credential<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        guard json.utf8.count <= 64 * 1_024, let credential = try? JSONDecoder().decode(T.self, from: Data(json.utf8)) else {
            throw GatewayProblem.malformed("The passkey's answer is not WebAuthn's JSON form.")
        }
        return credential
    }

    static func session(_ session: Components.Schemas.Session) -> NewSession {
        NewSession(token: session.token, expiresAt: session.expiresAt)
    }
}

import Foundation
import HTTPTypes
import KontoModel
import OpenAPIRuntime
import OpenAPIURLSession
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An async Swift client for the gateway's HTTP API (docs/API.md): sign-up, log-in, anonymous accounts, the account's
/// details with typed keys, changes, security-related operations, password reset and the schema. The session lives
/// in a ``KontoSessionStore``; every refusal is a ``KontoClientError`` with the API's stable code and per-field
/// errors.
///
/// The HTTP exchanges are the client swift-openapi-generator derives from the gateway's own `openapi.yaml`, over any
/// OpenAPI `ClientTransport` (URLSession's by default, on Apple platforms and Linux; a server adds
/// `KontoClientAsyncHTTPClient` from Konto's server package for async-http-client, which Linux needs to stream
/// ``events(after:)``: its URLSession buffers a whole answer); this type adds the session, the typed keys and one
/// error type on top.
public final class KontoClient: Sendable {
    public let sessions: any KontoSessionStore
    /// The generated client, or why there is none (a gateway URL that is not one).
    private let api: Result<Client, KontoClientError>

    private init(api: Result<Client, KontoClientError>, sessions: any KontoSessionStore) {
        self.api = api
        self.sessions = sessions
    }

    /// The `User-Agent` a client sends unless told another name.
    public static let defaultClientName = "KontoClient"

    /// A client of the gateway at `gatewayURL` over `transport`. Answers are read up to `maximumResponseBytes`; an
    /// event stream's lines up to 1 MiB each. `clientName` is its `User-Agent`: the account's list of sessions shows
    /// it (name the app and device, e.g. "Spezi Study on Ada's iPhone").
    public convenience init(
        gatewayURL: URL, transport: any ClientTransport, sessions: any KontoSessionStore = InMemorySessionStore(), maximumResponseBytes: Int = 4 << 20,
        clientName: String = KontoClient.defaultClientName
    ) {
        let limit = ResponseLimitMiddleware(maximumBytes: maximumResponseBytes, maximumLineBytes: 1 << 20, streamingOperations: ["accountEvents"])
        let client = Client(
            serverURL: gatewayURL,
            configuration: Configuration(dateTranscoder: RFC3339DateTranscoder(), jsonEncodingOptions: []),
            transport: transport,
            middlewares: [BearerTokenMiddleware(), UserAgentMiddleware(name: clientName), limit]
        )
        self.init(api: .success(client), sessions: sessions)
    }

    /// A client of the gateway at `gatewayURL` (e.g. `https://accounts.example.org`) over `transport`; for a string
    /// that is no gateway URL, a client whose every call fails with ``KontoClientError/Code/unreachable``.
    public convenience init(
        gatewayURL: String, transport: any ClientTransport, sessions: any KontoSessionStore = InMemorySessionStore(), maximumResponseBytes: Int = 4 << 20,
        clientName: String = KontoClient.defaultClientName
    ) {
        guard let url = Self.gatewayURL(gatewayURL) else {
            let error = KontoClientError(code: KontoClientError.Code.unreachable, status: 0, detail: "'\(gatewayURL.prefix(200))' is not a gateway URL (http://host:port).")
            self.init(api: .failure(error), sessions: sessions)
            return
        }
        self.init(gatewayURL: url, transport: transport, sessions: sessions, maximumResponseBytes: maximumResponseBytes, clientName: clientName)
    }

    /// A client of the gateway at `gatewayURL` (e.g. `https://accounts.example.org`) over URLSession: `timeout` bounds
    /// each exchange's wait for data (an event stream's heartbeats keep it going).
    public convenience init(
        gatewayURL: String, timeout: Duration = .seconds(30), sessions: any KontoSessionStore = InMemorySessionStore(),
        maximumResponseBytes: Int = 4 << 20, clientName: String = KontoClient.defaultClientName
    ) {
        self.init(
            gatewayURL: gatewayURL, transport: Self.urlSessionTransport(timeout: timeout), sessions: sessions, maximumResponseBytes: maximumResponseBytes,
            clientName: clientName
        )
    }

    /// URLSession's transport with its own session: no cookies, no cache (every answer is the account's), `timeout`
    /// between data.
    static func urlSessionTransport(timeout: Duration) -> URLSessionTransport {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        return URLSessionTransport(configuration: .init(session: URLSession(configuration: configuration)))
    }

    static func gatewayURL(_ text: String) -> URL? {
        guard let url = URL(string: text), url.scheme != nil, url.host != nil else { return nil }
        return url
    }

    // MARK: Sessions

    /// Signs up and keeps the new session. With an anonymous account's session stored, that account is upgraded
    /// and keeps its id.
    @discardableResult
    public func signUp(userId: String, password: String, details: AccountDetails = AccountDetails()) async throws -> KontoSignIn {
        let anonymous = try await sessions.load().flatMap { $0.isAnonymous ? $0 : nil }
        let body = Components.Schemas.SignUpRequest(userId: userId, password: password, details: details)
        let answer = try await call(token: anonymous?.token) { try await $0.signUp(body: .json(body)) }
        switch answer {
        case .created(let created): return try await signedIn(try created.body.json, userId: userId)
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Logs in. For an account with a second factor the password alone gives no session: this throws
    /// ``KontoClientError/Code/secondFactorRequired`` with the error's ``KontoClientError/challenge``, answered with
    /// ``completeLogIn(challenge:code:recoveryCode:)``.
    @discardableResult
    public func logIn(userId: String, password: String) async throws -> KontoSignIn {
        let body = Components.Schemas.LoginRequest(userId: userId, password: password)
        switch try await call({ try await $0.logIn(body: .json(body)) }) {
        case .ok(let ok): return try await signedIn(try ok.body.json, userId: userId)
        case .accepted(let accepted): throw try Self.secondFactorRequired(try accepted.body.json, userId: userId)
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Asks for a sign-in code by mail, where the deployment offers it (404 `account.notFound` otherwise). The answer
    /// is the same whether or not an account has `userId`.
    public func requestEmailCode(userId: String) async throws {
        switch try await call({ try await $0.requestEmailCode(body: .json(.init(userId: userId))) }) {
        case .accepted: break
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Logs in with the code mailed by ``requestEmailCode(userId:)``; as ``logIn(userId:password:)`` otherwise (a
    /// second factor enrolled: `account.secondFactorRequired` with the challenge). The session is kept; it is not
    /// privileged (security-related steps ask for the password).
    @discardableResult
    public func logIn(userId: String, emailCode: String) async throws -> KontoSignIn {
        switch try await call({ try await $0.logInWithEmailCode(body: .json(.init(userId: userId, code: emailCode))) }) {
        case .ok(let ok): return try await signedIn(try ok.body.json, userId: userId)
        case .accepted(let accepted): throw try Self.secondFactorRequired(try accepted.body.json, userId: userId)
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    private static func secondFactorRequired(_ answer: Components.Schemas.SecondFactorChallenge, userId: String) throws -> KontoClientError {
        let challenge = answer.challenge
        var error = KontoClientError(code: KontoClientError.Code.secondFactorRequired, status: 202, detail: "Enter a code from the authenticator app, or a recovery code.")
        error.challenge = KontoSecondFactorChallenge(
            token: challenge.token, expiresAt: challenge.expiresAt, factors: challenge.factors, userId: userId,
            passkeyOptions: try challenge.passkey.map { try JSONEncoder().encode($0) }
        )
        return error
    }

    /// Completes a login with the second factor: a code from the authenticator app, or a recovery code. The session
    /// is kept.
    @discardableResult
    public func completeLogIn(challenge: KontoSecondFactorChallenge, code: String? = nil, recoveryCode: String? = nil) async throws -> KontoSignIn {
        let body = Components.Schemas.SecondFactorLogin(challenge: challenge.token, code: code, recoveryCode: recoveryCode)
        switch try await call({ try await $0.completeSecondFactor(body: .json(body)) }) {
        case .ok(let ok): return try await signedIn(try ok.body.json, userId: challenge.userId)
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Completes a login with one of the account's passkeys: `passkeyCredentialJSON` is what the platform's API made
    /// for the challenge's ``KontoSecondFactorChallenge/passkeyOptions`` (AuthenticationResponseJSON, as a browser's
    /// `credential.toJSON()` gives it). The session is kept.
    @discardableResult
    public func completeLogIn(challenge: KontoSecondFactorChallenge, passkeyCredentialJSON: Data) async throws -> KontoSignIn {
        let credential = try Self.decodeCredential(Components.Schemas.PasskeyAssertionCredential.self, passkeyCredentialJSON)
        let body = Components.Schemas.SecondFactorLogin(challenge: challenge.token, credential: credential)
        switch try await call({ try await $0.completeSecondFactor(body: .json(body)) }) {
        case .ok(let ok): return try await signedIn(try ok.body.json, userId: challenge.userId)
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    // MARK: Passkeys

    /// Options for a passwordless login (PublicKeyCredentialRequestOptionsJSON), for the platform's passkey API.
    public func passkeyLoginOptions() async throws -> Data {
        switch try await call({ try await $0.passkeyLoginOptions() }) {
        case .ok(let ok): return try JSONEncoder().encode(try ok.body.json)
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Signs in with a passkey alone: `passkeyCredentialJSON` is the platform's answer to ``passkeyLoginOptions()``
    /// (AuthenticationResponseJSON). The session is kept.
    @discardableResult
    public func logIn(passkeyCredentialJSON: Data) async throws -> KontoSignIn {
        let credential = try Self.decodeCredential(Components.Schemas.PasskeyAssertionCredential.self, passkeyCredentialJSON)
        switch try await call({ try await $0.passkeyLogIn(body: .json(.init(credential: credential))) }) {
        case .ok(let ok):
            let body = try ok.body.json
            return try await signedIn(body, userId: body.details[\.userId] ?? body.accountId)
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Options to make a passkey for the account (PublicKeyCredentialCreationOptionsJSON; security-related, as
    /// ``changePassword(to:currentPassword:)``).
    public func passkeyRegistrationOptions(currentPassword: String? = nil) async throws -> Data {
        let session = try await requireSession()
        let body = currentPassword.map { Operations.PasskeyRegistrationOptions.Input.Body.json(.init(currentPassword: $0)) }
        switch try await call(token: session.token, { try await $0.passkeyRegistrationOptions(body: body) }) {
        case .ok(let ok): return try JSONEncoder().encode(try ok.body.json)
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Registers the passkey the platform made for ``passkeyRegistrationOptions(currentPassword:)``
    /// (RegistrationResponseJSON); from then on a password login asks for a second factor.
    @discardableResult
    public func registerPasskey(credentialJSON: Data, name: String? = nil) async throws -> KontoFactor {
        let session = try await requireSession()
        let credential = try Self.decodeCredential(Components.Schemas.PasskeyRegistrationCredential.self, credentialJSON)
        switch try await call(token: session.token, { try await $0.registerPasskey(body: .json(.init(name: name, credential: credential))) }) {
        case .created(let created):
            let factor = try created.body.json
            return KontoFactor(id: factor.id, type: factor._type, name: factor.name, createdAt: factor.createdAt, lastUsedAt: factor.lastUsedAt, isPending: factor.pending, remaining: factor.remaining)
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// A credential as the platform gave it, in the document's shape; a clear error for anything else.
    private static func decodeCredential<T: Decodable>(_ type: T.Type, _ json: Data) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: json)
        } catch {
            throw KontoClientError(code: KontoClientError.Code.invalidInput, status: 0, detail: "The passkey credential is not WebAuthn's JSON form (credential.toJSON()).")
        }
    }

    // MARK: Second factors

    /// The account's second factors, oldest first.
    public func factors() async throws -> [KontoFactor] {
        let session = try await requireSession()
        switch try await call(token: session.token, { try await $0.listFactors() }) {
        case .ok(let ok):
            return try ok.body.json.factors.map {
                KontoFactor(id: $0.id, type: $0._type, name: $0.name, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt, isPending: $0.pending, remaining: $0.remaining)
            }
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Starts a TOTP enrolment (security-related, as ``changePassword(to:currentPassword:)``).
    public func enrollTOTP(currentPassword: String? = nil) async throws -> KontoTOTPEnrolment {
        let session = try await requireSession()
        let body = currentPassword.map { Operations.EnrollTOTP.Input.Body.json(.init(currentPassword: $0)) }
        switch try await call(token: session.token, { try await $0.enrollTOTP(body: body) }) {
        case .created(let created):
            let enrolment = try created.body.json
            return KontoTOTPEnrolment(factorId: enrolment.factorId, secret: enrolment.secret, otpauthURI: enrolment.otpauthUri)
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Confirms a TOTP enrolment with a code from the app; from then on a login asks for the second factor.
    @discardableResult
    public func confirmTOTP(factorId: String, code: String) async throws -> KontoFactor {
        let session = try await requireSession()
        switch try await call(token: session.token, { try await $0.confirmTOTP(path: .init(factorId: factorId), body: .json(.init(code: code))) }) {
        case .ok(let ok):
            let factor = try ok.body.json
            return KontoFactor(id: factor.id, type: factor._type, name: factor.name, createdAt: factor.createdAt, lastUsedAt: factor.lastUsedAt, isPending: factor.pending, remaining: factor.remaining)
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Removes a second factor (security-related; with second factors, after ``reauthenticate(password:code:recoveryCode:)``
    /// with one). How many second factors are left (0: the password alone signs in again).
    @discardableResult
    public func removeFactor(id factorId: String, currentPassword: String? = nil) async throws -> Int {
        let session = try await requireSession()
        let body = currentPassword.map { Operations.RemoveFactor.Input.Body.json(.init(currentPassword: $0)) }
        switch try await call(token: session.token, { try await $0.removeFactor(path: .init(factorId: factorId), body: body) }) {
        case .ok(let ok): return try ok.body.json.remainingFactors
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Ten new recovery codes, replacing every earlier one (security-related). Shown once: keep them safe.
    public func regenerateRecoveryCodes(currentPassword: String? = nil) async throws -> [String] {
        let session = try await requireSession()
        let body = currentPassword.map { Operations.RegenerateRecoveryCodes.Input.Body.json(.init(currentPassword: $0)) }
        switch try await call(token: session.token, { try await $0.regenerateRecoveryCodes(body: body) }) {
        case .created(let created): return try created.body.json.codes
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// A new anonymous account and its session (a later ``signUp(userId:password:details:)`` keeps the account).
    @discardableResult
    public func signInAnonymously() async throws -> KontoSignIn {
        switch try await call({ try await $0.signInAnonymously() }) {
        case .created(let created): return try await signedIn(try created.body.json, userId: nil)
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Ends this session. The stored session is forgotten even if the gateway had ended it already.
    public func logOut() async throws {
        let session = try await requireSession()
        switch try await call(token: session.token, { try await $0.logOut() }) {
        case .noContent: break
        case .default(401, _): break
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
        try await sessions.clear()
    }

    /// Ends every session of the account; how many ended.
    @discardableResult
    public func logOutEverywhere() async throws -> Int {
        let session = try await requireSession()
        switch try await call(token: session.token, { try await $0.logOutEverywhere() }) {
        case .ok(let ok):
            let ended = try ok.body.json.sessionsEnded
            try await sessions.clear()
            return ended
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// The stored session, if any (it may have ended at the gateway since).
    public func currentSession() async throws -> KontoSession? {
        try await sessions.load()
    }

    // MARK: The account

    public func account() async throws -> KontoAccount {
        let session = try await requireSession()
        switch try await call(token: session.token, { try await $0.getAccount() }) {
        case .ok(let ok): return try ok.body.json
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Sets and removes details in one change. With `ifVersion`, the change is refused (`account.versionConflict`,
    /// 412) when the details changed since that version was read.
    @discardableResult
    public func modify(set: AccountDetails = AccountDetails(), remove: Set<String> = [], ifVersion: Int64? = nil) async throws -> KontoAccount {
        let session = try await requireSession()
        let body = Components.Schemas.Modifications(set: set, remove: remove.sorted())
        let headers = Operations.ModifyAccount.Input.Headers(ifMatch: ifVersion.map { "\"\($0)\"" })
        switch try await call(token: session.token, { try await $0.modifyAccount(headers: headers, body: .json(body)) }) {
        case .ok(let ok): return try ok.body.json
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Changes the password (security-related: within the privileged window, or with `currentPassword`); every other
    /// session ends. How many ended.
    @discardableResult
    public func changePassword(to newPassword: String, currentPassword: String? = nil) async throws -> Int {
        let session = try await requireSession()
        let body = Components.Schemas.PasswordChange(currentPassword: currentPassword, newPassword: newPassword)
        switch try await call(token: session.token, { try await $0.changePassword(body: .json(body)) }) {
        case .ok(let ok): return try ok.body.json.sessionsEnded
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Changes the userId (security-related, as ``changePassword(to:currentPassword:)``).
    public func changeUserId(to userId: String, currentPassword: String? = nil) async throws {
        let session = try await requireSession()
        let body = Components.Schemas.UserIdChange(userId: userId, currentPassword: currentPassword)
        switch try await call(token: session.token, { try await $0.changeUserId(body: .json(body)) }) {
        case .noContent: break
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
        var renamed = session
        renamed.userId = userId
        try await sessions.save(renamed)
    }

    /// Opens the privileged window by entering the password again; until when it is open. The gateway answers with a
    /// fresh session that replaces the stored one (whose token stopped working).
    /// With a second factor enrolled, security-related operations need it here (`code` or `recoveryCode`).
    @discardableResult
    public func reauthenticate(password: String? = nil, code: String? = nil, recoveryCode: String? = nil, passkeyCredentialJSON: Data? = nil) async throws -> Date {
        let session = try await requireSession()
        let credential = try passkeyCredentialJSON.map { try Self.decodeCredential(Components.Schemas.PasskeyAssertionCredential.self, $0) }
        let body = Components.Schemas.Reauthentication(password: password, code: code, recoveryCode: recoveryCode, credential: credential)
        switch try await call(token: session.token, { try await $0.reauthenticate(body: .json(body)) }) {
        case .ok(let ok):
            let privilege = try ok.body.json
            if let fresh = privilege.session {
                var renewed = session
                renewed.token = fresh.token
                renewed.expiresAt = fresh.expiresAt
                try await sessions.save(renewed)
            }
            return privilege.privilegedUntil
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Deletes the account (security-related, as ``changePassword(to:currentPassword:)``); the stored session is
    /// forgotten.
    public func deleteAccount(currentPassword: String? = nil) async throws {
        let session = try await requireSession()
        let body = currentPassword.map { Operations.DeleteAccount.Input.Body.json(Components.Schemas.AccountDeletion(currentPassword: $0)) }
        switch try await call(token: session.token, { try await $0.deleteAccount(body: body) }) {
        case .noContent: break
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
        try await sessions.clear()
    }

    // MARK: Password reset, schema, health

    /// Asks for a reset; the answer is the same whether or not the account exists.
    public func requestPasswordReset(userId: String) async throws {
        let body = Components.Schemas.PasswordResetRequest(userId: userId)
        switch try await call({ try await $0.requestPasswordReset(body: .json(body)) }) {
        case .accepted: break
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Sets a new password with the token the reset sent; every session of the account ends.
    public func confirmPasswordReset(token: String, newPassword: String) async throws {
        let body = Components.Schemas.PasswordResetConfirmation(token: token, newPassword: newPassword)
        switch try await call({ try await $0.confirmPasswordReset(body: .json(body)) }) {
        case .noContent: break
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Asks for a new link confirming the signed-in account's address (nothing is sent when it is verified already;
    /// a few an hour, `account.throttled` beyond).
    public func requestEmailVerification() async throws {
        let session = try await requireSession()
        switch try await call(token: session.token, { try await $0.requestEmailVerification() }) {
        case .accepted: break
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Confirms an address with the token of the link sent to it; no session needed.
    public func confirmEmailVerification(token: String) async throws {
        let body = Components.Schemas.EmailVerificationConfirmation(token: token)
        // The session this client holds goes with it: when this is the account's first proof of its address, that
        // session and the password stay, and what else the account had ends (docs/IDENTITY.md, "Pre-hijacked accounts").
        let session = try? await sessions.load()
        switch try await call(token: session?.token, { try await $0.confirmEmailVerification(body: .json(body)) }) {
        case .noContent: break
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Confirms the signed-in account's address with the code from its verification mail (8 digits): the app's way,
    /// which keeps this session and the password (the link opened elsewhere has no session to keep).
    public func confirmEmailVerification(code: String) async throws {
        let body = Components.Schemas.EmailVerificationCode(code: code)
        let session = try await requireSession()
        switch try await call(token: session.token, { try await $0.confirmEmailVerificationCode(body: .json(body)) }) {
        case .noContent: break
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    public func schema() async throws -> KontoSchema {
        switch try await call({ try await $0.getSchema() }) {
        case .ok(let ok): return try ok.body.json
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Whether the gateway and every service behind it are ready (`GET /health/ready`).
    public func health() async throws -> KontoHealth {
        switch try await call({ try await $0.ready() }) {
        case .ok(let ok): return KontoHealth(status: 200, body: try ok.body.json)
        case .serviceUnavailable(let unavailable): return KontoHealth(status: 503, body: try unavailable.body.json)
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    // MARK: Exchanges

    func requireSession() async throws -> KontoSession {
        guard let session = try await sessions.load() else {
            throw KontoClientError(code: KontoClientError.Code.notSignedIn, status: 0, detail: "Not signed in: sign up, log in or sign in anonymously first.")
        }
        return session
    }

    /// One exchange through the generated client, with `token` presented; its failures as ``KontoClientError``s
    /// (no answer: unreachable; an answer that is not what the document says: unexpected).
    func call<Output>(token: String? = nil, _ exchange: (Client) async throws -> Output) async throws -> Output {
        let client = try api.get()
        do {
            return try await BearerTokenMiddleware.$token.withValue(token) { try await exchange(client) }
        } catch let error as ClientError {
            guard let response = error.response else {
                throw KontoClientError(code: KontoClientError.Code.unreachable, status: 0, detail: "The gateway could not be reached (\(error.underlyingError)).")
            }
            throw KontoClientError(
                code: KontoClientError.Code.unexpectedAnswer, status: response.status.code,
                detail: "The answer (HTTP \(response.status.code)) is not what the API promises (\(error.underlyingError))."
            )
        } catch let error as KontoClientError {
            throw error
        } catch {
            // Reading a body the generated code handed over (`.json` on an answer of another content type).
            throw KontoClientError(code: KontoClientError.Code.unexpectedAnswer, status: 0, detail: "The answer could not be read (\(error)).")
        }
    }

    /// Keeps the new session; `userId` nil: an anonymous account's.
    func signedIn(_ body: Components.Schemas.AccountSession, userId: String?) async throws -> KontoSignIn {
        let session = KontoSession(
            accountId: body.accountId, token: body.session.token, expiresAt: body.session.expiresAt, isAnonymous: userId == nil, userId: userId
        )
        try await sessions.save(session)
        return KontoSignIn(session: session, details: body.details)
    }

    /// The problem document of a refusal.
    static func refusal(_ status: Int, _ problem: Components.Responses.Problem) -> KontoClientError {
        let retryAfter = problem.headers.retryAfter
        guard case .applicationProblemJson(let document) = problem.body else {
            return KontoClientError(code: KontoClientError.Code.unexpectedAnswer, status: status, detail: "HTTP \(status) without a problem document.", retryAfter: retryAfter)
        }
        return KontoClientError(
            code: document.code, status: status, detail: document.detail,
            fields: (document.errors ?? []).map { AccountFieldError(key: $0.key, code: AccountFieldError.Code(rawValue: $0.code), message: $0.message) },
            retryAfter: retryAfter, requestId: document.requestId
        )
    }
}

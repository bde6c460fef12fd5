import Foundation
import KontoModel

/// An async Swift client for the gateway's HTTP API (docs/API.md): sign-up, log-in, anonymous
/// accounts, the account's details with typed keys, changes, security-related operations, password reset and the
/// schema. The session lives in a ``KontoSessionStore``; every refusal is a ``KontoClientError`` with the API's
/// stable code and per-field errors.
public final class KontoClient: Sendable {
    public let transport: any KontoTransport
    public let sessions: any KontoSessionStore

    public init(transport: any KontoTransport, sessions: any KontoSessionStore = InMemorySessionStore()) {
        self.transport = transport
        self.sessions = sessions
    }

    /// A client of the gateway at `gatewayURL` (e.g. `http://127.0.0.1:8080`) over async-http-client.
    public convenience init(gatewayURL: String, sessions: any KontoSessionStore = InMemorySessionStore()) {
        self.init(transport: AsyncHTTPClientTransport(baseURL: gatewayURL), sessions: sessions)
    }

    // MARK: Sessions

    /// Signs up and keeps the new session. With an anonymous account's session stored, that account is upgraded
    /// and keeps its id.
    @discardableResult
    public func signUp(userId: String, password: String, details: AccountDetails = AccountDetails()) async throws -> KontoSignIn {
        let anonymous = try await sessions.load().flatMap { $0.isAnonymous ? $0 : nil }
        let answer = try await exchange("POST", "/v1/accounts", body: SignUpBody(userId: userId, password: password, details: details), token: anonymous?.token, expect: 201)
        return try await signedIn(answer, userId: userId)
    }

    @discardableResult
    public func logIn(userId: String, password: String) async throws -> KontoSignIn {
        let answer = try await exchange("POST", "/v1/sessions", body: Credentials(userId: userId, password: password), expect: 200)
        return try await signedIn(answer, userId: userId)
    }

    /// A new anonymous account and its session (a later ``signUp(userId:password:details:)`` keeps the account).
    @discardableResult
    public func signInAnonymously() async throws -> KontoSignIn {
        let answer = try await exchange("POST", "/v1/sessions/anonymous", body: Empty(), expect: 201)
        return try await signedIn(answer, userId: nil)
    }

    /// Ends this session. The stored session is forgotten even if the gateway had ended it already.
    public func logOut() async throws {
        let session = try await requireSession()
        do {
            _ = try await exchange("DELETE", "/v1/sessions/current", token: session.token, expect: 204)
        } catch let error as KontoClientError where error.status == 401 {
        }
        try await sessions.clear()
    }

    /// Ends every session of the account; how many ended.
    @discardableResult
    public func logOutEverywhere() async throws -> Int {
        let session = try await requireSession()
        let answer = try await exchange("DELETE", "/v1/sessions", token: session.token, expect: 200)
        try await sessions.clear()
        return try decode(SessionsEnded.self, answer).sessionsEnded
    }

    /// The stored session, if any (it may have ended at the gateway since).
    public func currentSession() async throws -> KontoSession? {
        try await sessions.load()
    }

    // MARK: The account

    public func account() async throws -> KontoAccount {
        let session = try await requireSession()
        return try account(from: try await exchange("GET", "/v1/account", token: session.token, expect: 200))
    }

    /// Sets and removes details in one change. With `ifVersion`, the change is refused (`account.versionConflict`,
    /// 412) when the details changed since that version was read.
    @discardableResult
    public func modify(set: AccountDetails = AccountDetails(), remove: Set<String> = [], ifVersion: Int64? = nil) async throws -> KontoAccount {
        let session = try await requireSession()
        let body = Modification(set: set, remove: remove.sorted())
        let headers = ifVersion.map { ["If-Match": "\"\($0)\""] } ?? [:]
        return try account(from: try await exchange("PATCH", "/v1/account", body: body, token: session.token, headers: headers, expect: 200))
    }

    /// Changes the password (security-related: within the privileged window, or with `currentPassword`); every other
    /// session ends. How many ended.
    @discardableResult
    public func changePassword(to newPassword: String, currentPassword: String? = nil) async throws -> Int {
        let session = try await requireSession()
        let answer = try await exchange("PUT", "/v1/account/password", body: PasswordChange(currentPassword: currentPassword, newPassword: newPassword), token: session.token, expect: 200)
        return try decode(SessionsEnded.self, answer).sessionsEnded
    }

    /// Changes the userId (security-related, as ``changePassword(to:currentPassword:)``).
    public func changeUserId(to userId: String, currentPassword: String? = nil) async throws {
        let session = try await requireSession()
        _ = try await exchange("PUT", "/v1/account/user-id", body: UserIdChange(userId: userId, currentPassword: currentPassword), token: session.token, expect: 204)
        var renamed = session
        renamed.userId = userId
        try await sessions.save(renamed)
    }

    /// Opens the privileged window by entering the password again; until when it is open. The gateway answers with a
    /// fresh session that replaces the stored one (whose token stopped working).
    @discardableResult
    public func reauthenticate(password: String) async throws -> Date {
        let session = try await requireSession()
        let answer = try await exchange("POST", "/v1/account/reauthenticate", body: Reauthentication(password: password), token: session.token, expect: 200)
        let privilege = try decode(Privilege.self, answer)
        if let fresh = privilege.session {
            var renewed = session
            renewed.token = fresh.token
            renewed.expiresAt = fresh.expiresAt
            try await sessions.save(renewed)
        }
        return privilege.privilegedUntil
    }

    /// Deletes the account (security-related, as ``changePassword(to:currentPassword:)``); the stored session is
    /// forgotten.
    public func deleteAccount(currentPassword: String? = nil) async throws {
        let session = try await requireSession()
        let body = currentPassword.map { AccountDeletion(currentPassword: $0) }
        _ = try await exchange("DELETE", "/v1/account", body: body, token: session.token, expect: 204)
        try await sessions.clear()
    }

    // MARK: Password reset and schema

    /// Asks for a reset; the answer is the same whether or not the account exists.
    public func requestPasswordReset(userId: String) async throws {
        _ = try await exchange("POST", "/v1/password-resets", body: ResetRequest(userId: userId), expect: 202)
    }

    /// Sets a new password with the token the reset sent; every session of the account ends.
    public func confirmPasswordReset(token: String, newPassword: String) async throws {
        _ = try await exchange("POST", "/v1/password-resets/confirm", body: ResetConfirmation(token: token, newPassword: newPassword), expect: 204)
    }

    public func schema() async throws -> KontoSchema {
        try decode(KontoSchema.self, try await exchange("GET", "/v1/schema", expect: 200))
    }

    // MARK: Exchanges

    func requireSession() async throws -> KontoSession {
        guard let session = try await sessions.load() else {
            throw KontoClientError(code: KontoClientError.Code.notSignedIn, status: 0, detail: "Not signed in: sign up, log in or sign in anonymously first.")
        }
        return session
    }

    /// Keeps the new session; `userId` nil: an anonymous account's.
    private func signedIn(_ answer: KontoHTTPResponse, userId: String?) async throws -> KontoSignIn {
        let body = try decode(AccountSessionBody.self, answer)
        let session = KontoSession(
            accountId: body.accountId, token: body.session.token, expiresAt: body.session.expiresAt, isAnonymous: userId == nil, userId: userId
        )
        try await sessions.save(session)
        return KontoSignIn(session: session, details: body.details ?? AccountDetails())
    }

    private func account(from answer: KontoHTTPResponse) throws -> KontoAccount {
        try decode(KontoAccount.self, answer)
    }

    private func exchange(
        _ method: String,
        _ path: String,
        body: (some Encodable)? = Empty?.none,
        token: String? = nil,
        headers: [String: String] = [:],
        expect status: Int
    ) async throws -> KontoHTTPResponse {
        var request = KontoHTTPRequest(method: method, path: path, headers: headers)
        request.headers["Accept"] = "application/json"
        if let body {
            request.body = Array(try Self.encoder.encode(body))
            request.headers["Content-Type"] = "application/json"
        }
        if let token {
            request.headers["Authorization"] = "Bearer \(token)"
        }
        let answer: KontoHTTPResponse
        do {
            answer = try await transport.send(request)
        } catch let error as KontoClientError {
            throw error
        } catch {
            throw Self.unreachable(error)
        }
        guard answer.status == status else { throw Self.refusal(answer) }
        return answer
    }

    static func unreachable(_ error: any Error) -> KontoClientError {
        KontoClientError(code: KontoClientError.Code.unreachable, status: 0, detail: "The gateway could not be reached (\(error)).")
    }

    /// The problem document of a refusal (or what can be said of an answer that is none).
    static func refusal(_ answer: KontoHTTPResponse) -> KontoClientError {
        let retryAfter = answer.headers["retry-after"].flatMap { Int($0) }
        guard let problem = try? JSONDecoder().decode(Problem.self, from: Data(answer.body)) else {
            return KontoClientError(code: KontoClientError.Code.unexpectedAnswer, status: answer.status, detail: "HTTP \(answer.status) without a problem document.", retryAfter: retryAfter)
        }
        return KontoClientError(code: problem.code, status: answer.status, detail: problem.detail, fields: problem.errors ?? [], retryAfter: retryAfter, requestId: problem.requestId)
    }

    private func decode<T: Decodable>(_ type: T.Type, _ answer: KontoHTTPResponse) throws -> T {
        do {
            return try Self.decoder.decode(T.self, from: Data(answer.body))
        } catch {
            throw KontoClientError(code: KontoClientError.Code.unexpectedAnswer, status: answer.status, detail: "The answer could not be read as \(T.self).")
        }
    }

    static let encoder = JSONEncoder()

    /// RFC 3339 times, with or without fractional seconds.
    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            if let date = try? Date(text, strategy: .iso8601) { return date }
            if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an RFC 3339 time"))
        }
        return decoder
    }()
}

// MARK: Bodies

private struct Empty: Codable {}
private struct SignUpBody: Encodable { var userId: String; var password: String; var details: AccountDetails }
private struct Credentials: Encodable { var userId: String; var password: String }
private struct Modification: Encodable { var set: AccountDetails; var remove: [String] }
private struct PasswordChange: Encodable { var currentPassword: String?; var newPassword: String }
private struct UserIdChange: Encodable { var userId: String; var currentPassword: String? }
private struct AccountDeletion: Encodable { var currentPassword: String }
private struct Reauthentication: Encodable { var password: String }
private struct ResetRequest: Encodable { var userId: String }
private struct ResetConfirmation: Encodable { var token: String; var newPassword: String }
private struct SessionsEnded: Decodable { var sessionsEnded: Int }
private struct Privilege: Decodable { var privilegedUntil: Date; var session: AccountSessionBody.Session? }
private struct AccountSessionBody: Decodable {
    struct Session: Decodable { var token: String; var expiresAt: Date }
    var accountId: String
    var session: Session
    var details: AccountDetails?
}
private struct Problem: Decodable { var code: String; var detail: String?; var errors: [AccountFieldError]?; var requestId: String? }

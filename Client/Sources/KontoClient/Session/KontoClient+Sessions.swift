import OpenAPIRuntime

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One place the account is signed in (`GET /v1/account/sessions`); never its token.
public struct KontoDeviceSession: Sendable, Equatable, Identifiable {
    public var id: String
    public var createdAt: Date
    /// When it was last used, to within a minute.
    public var lastUsedAt: Date?
    /// When it ends unless used before, and when it ends however used.
    public var idleExpiresAt: Date
    public var absoluteExpiresAt: Date
    /// 1: a first factor; 2: a second factor or a passkey too.
    public var assuranceLevel: Int
    /// `password`, `emailCode`, `passkey`, `secondFactor`, `provider:<id>`, `signUp`, `anonymous`.
    public var signInMethod: String?
    /// The client's network when it signed in (an IPv4 /24 or IPv6 /48).
    public var clientAddress: String?
    /// What the client called itself (its User-Agent).
    public var clientName: String?
    /// This client's own session.
    public var isCurrent: Bool
}

extension KontoClient {
    /// Where the account is signed in, oldest first, this client's session marked.
    public func deviceSessions() async throws -> [KontoDeviceSession] {
        let session = try await requireSession()
        switch try await call(token: session.token, { try await $0.listAccountSessions() }) {
        case .ok(let ok):
            return try ok.body.json.sessions.map {
                KontoDeviceSession(
                    id: $0.id, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt, idleExpiresAt: $0.idleExpiresAt, absoluteExpiresAt: $0.absoluteExpiresAt,
                    assuranceLevel: $0.assuranceLevel, signInMethod: $0.signInMethod, clientAddress: $0.clientAddress, clientName: $0.clientName,
                    isCurrent: $0.current
                )
            }
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Ends one session. This client's own is a log-out (the stored session is forgotten); another is
    /// security-related (within the privileged window, or with `currentPassword`).
    public func endSession(id sessionId: String, currentPassword: String? = nil) async throws {
        let session = try await requireSession()
        let body = currentPassword.map { Operations.EndAccountSession.Input.Body.json(.init(currentPassword: $0)) }
        switch try await call(token: session.token, { try await $0.endAccountSession(path: .init(sessionId: sessionId), body: body) }) {
        case .noContent: break
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
        // This client's session is unknown from now on, whichever id named it.
        if try await deviceSessionStillValid() == false { try await sessions.clear() }
    }

    /// Signs out every other device: ends every session but this one (security-related). How many ended.
    @discardableResult
    public func endOtherSessions(currentPassword: String? = nil) async throws -> Int {
        let session = try await requireSession()
        let body = currentPassword.map { Operations.EndOtherAccountSessions.Input.Body.json(.init(currentPassword: $0)) }
        switch try await call(token: session.token, { try await $0.endOtherAccountSessions(body: body) }) {
        case .ok(let ok): return try ok.body.json.sessionsEnded
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Whether the stored session still signs in (an ended one answers 401).
    private func deviceSessionStillValid() async throws -> Bool {
        guard let session = try await sessions.load() else { return false }
        switch try await call(token: session.token, { try await $0.getAccount() }) {
        case .ok: return true
        case .default(401, _): return false
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }
}

/// The mail the owner may turn off; the security notices always go out.
public struct KontoMailPreferences: Sendable, Equatable {
    /// A notice when the account is signed in from a client it was not signed in from before.
    public var newSignIn: Bool

    public init(newSignIn: Bool) {
        self.newSignIn = newSignIn
    }
}

extension KontoClient {
    public func mailPreferences() async throws -> KontoMailPreferences {
        let session = try await requireSession()
        switch try await call(token: session.token, { try await $0.getMailPreferences() }) {
        case .ok(let ok): return KontoMailPreferences(newSignIn: try ok.body.json.newSignIn)
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Changes them (nil keeps one). Turning a notice off is security-related: within the privileged window, or with
    /// `currentPassword`.
    @discardableResult
    public func setMailPreferences(newSignIn: Bool? = nil, currentPassword: String? = nil) async throws -> KontoMailPreferences {
        let session = try await requireSession()
        let body = Components.Schemas.MailPreferencesChange(newSignIn: newSignIn, currentPassword: currentPassword)
        switch try await call(token: session.token, { try await $0.setMailPreferences(body: .json(body)) }) {
        case .ok(let ok): return KontoMailPreferences(newSignIn: try ok.body.json.newSignIn)
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }
}

import Foundation

/// A signed-in session: the bearer token the gateway gave, until when it lasts, and whose it is.
public struct KontoSession: Codable, Sendable, Equatable {
    public var accountId: String
    public var token: String
    public var expiresAt: Date
    /// An anonymous account's session: signing up with it keeps the account (and its id).
    public var isAnonymous: Bool
    /// The userId the session was opened with, known without asking the gateway (the account's details carry the
    /// current one); nil when anonymous.
    public var userId: String?

    public init(accountId: String, token: String, expiresAt: Date, isAnonymous: Bool = false, userId: String? = nil) {
        self.accountId = accountId
        self.token = token
        self.expiresAt = expiresAt
        self.isAnonymous = isAnonymous
        self.userId = userId
    }
}

/// Where a ``KontoClient`` keeps its session between calls (a file for the `konto` command, the keychain on an
/// Apple platform). ``InMemorySessionStore`` is the default.
public protocol KontoSessionStore: Sendable {
    func load() async throws -> KontoSession?
    func save(_ session: KontoSession) async throws
    func clear() async throws
}

/// Keeps the session for the client's lifetime only.
public actor InMemorySessionStore: KontoSessionStore {
    private var session: KontoSession?

    public init(_ session: KontoSession? = nil) {
        self.session = session
    }

    public func load() -> KontoSession? { session }
    public func save(_ session: KontoSession) { self.session = session }
    public func clear() { session = nil }
}

import KontoModel

/// What an account's first proof of its address ended (``IdentityStorage/endAccessBeforeFirstProof(accountId:keeping:keepingPassword:at:events:)``):
/// what the account gained while its address was unproven, the squatter's ways back in.
public struct AccessEnded: Sendable, Equatable {
    public var sessions: Int
    public var passwordRemoved: Bool
    /// Each removed factor's id and kind.
    public var factors: [(id: String, kind: StoredFactor.Kind)]
    /// Each unlinked identity's id and provider.
    public var identities: [(id: String, provider: String)]

    public init(sessions: Int, passwordRemoved: Bool, factors: [(id: String, kind: StoredFactor.Kind)], identities: [(id: String, provider: String)]) {
        self.sessions = sessions
        self.passwordRemoved = passwordRemoved
        self.factors = factors
        self.identities = identities
    }

    /// Whether anything at all was ended.
    public var isEmpty: Bool { sessions == 0 && !passwordRemoved && factors.isEmpty && identities.isEmpty }

    public static func == (left: AccessEnded, right: AccessEnded) -> Bool {
        left.sessions == right.sessions && left.passwordRemoved == right.passwordRemoved
            && left.factors.map(\.id) == right.factors.map(\.id) && left.factors.map(\.kind) == right.factors.map(\.kind)
            && left.identities.map(\.id) == right.identities.map(\.id) && left.identities.map(\.provider) == right.identities.map(\.provider)
    }
}

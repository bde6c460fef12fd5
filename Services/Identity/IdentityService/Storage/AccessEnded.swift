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
    /// The applications (OpenID Provider clients) whose consent or sign-ins ended, by client id, sorted.
    public var applications: [String]
    /// Mail the account had turned off (new sign-in notices) is on again.
    public var mailPreferencesRestored: Bool

    public init(
        sessions: Int, passwordRemoved: Bool, factors: [(id: String, kind: StoredFactor.Kind)], identities: [(id: String, provider: String)],
        applications: [String] = [], mailPreferencesRestored: Bool = false
    ) {
        self.sessions = sessions
        self.passwordRemoved = passwordRemoved
        self.factors = factors
        self.identities = identities
        self.applications = applications
        self.mailPreferencesRestored = mailPreferencesRestored
    }

    /// Whether anything at all was ended.
    public var isEmpty: Bool { sessions == 0 && !passwordRemoved && factors.isEmpty && identities.isEmpty && applications.isEmpty && !mailPreferencesRestored }

    public static func == (left: AccessEnded, right: AccessEnded) -> Bool {
        left.applications == right.applications && left.mailPreferencesRestored == right.mailPreferencesRestored
            && left.sessions == right.sessions && left.passwordRemoved == right.passwordRemoved
            && left.factors.map(\.id) == right.factors.map(\.id) && left.factors.map(\.kind) == right.factors.map(\.kind)
            && left.identities.map(\.id) == right.identities.map(\.id) && left.identities.map(\.provider) == right.identities.map(\.provider)
    }
}

import KontoModel

/// The mail the owner may turn off (``IdentityContract/mailPreferences``). The security notices (a password or address
/// changed, a factor added or removed, an identity linked, wrong second-factor answers, a reset) always go out and are
/// not listed.
public struct IdentityMailPreferences: Codable, Sendable, Equatable {
    /// A notice when the account is signed in from a client it was not signed in from before.
    public var newSignIn: Bool

    public init(newSignIn: Bool) {
        self.newSignIn = newSignIn
    }
}

/// Changes the owner's mail preferences (``IdentityContract/setMailPreferences``); nil leaves one as it is. Turning a
/// notice off is security-related (a stolen session must not silence the notices that would give it away); turning
/// one on is not.
public struct IdentitySetMailPreferencesRequest: Codable, Sendable {
    public var token: BearerToken
    public var newSignIn: Bool?
    public var currentPassword: SecretString?

    public init(token: BearerToken, newSignIn: Bool? = nil, currentPassword: SecretString? = nil) {
        self.token = token
        self.newSignIn = newSignIn
        self.currentPassword = currentPassword
    }
}

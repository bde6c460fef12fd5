import KontoModel

/// Signs in with an external identity provider (OpenID Connect, Sign in with Apple).
///
/// Native (an app holding the provider's ID token): `idToken` and `nonce` (for Apple, the nonce whose SHA-256 the
/// app gave Apple), with Apple's `authorizationCode` (exchanged for the refresh token Konto revokes at deletion)
/// and, the first time only, the `name` Apple handed the app. Web (the console after the provider's redirect):
/// `authorizationCode`, `codeVerifier` and `redirectURI`, exchanged by Identity, and the `nonce` sent at
/// authorization. Completing a sign-up the provider's details did not fill: `signUpToken` from the earlier answer
/// with `userId` and `details`.
public struct IdentityExternalLoginRequest: Codable, Sendable {
    public var provider: String
    public var idToken: SecretString?
    public var nonce: SecretString?
    public var authorizationCode: SecretString?
    public var codeVerifier: SecretString?
    public var redirectURI: String?
    /// The user's name as the provider gave it beside the token (Apple: the first authorization only).
    public var name: PersonName?
    /// Completes a sign-up (``IdentityExternalSignUp/token``).
    public var signUpToken: BearerToken?
    /// For a new account where the provider gave no usable userId.
    public var userId: String?
    /// For a new account: the required keys the provider did not give.
    public var details: AccountDetails?
    /// Upgrades this anonymous session's account (keeping its accountId) instead of creating one.
    public var anonymousSession: BearerToken?
    public var clientAddress: String?
    public var clientDevice: String?
    /// What the client calls itself (its User-Agent), shown in the owner's list of sessions; bounded by Identity.
    public var clientName: String?

    public init(
        provider: String, idToken: SecretString? = nil, nonce: SecretString? = nil, authorizationCode: SecretString? = nil,
        codeVerifier: SecretString? = nil, redirectURI: String? = nil, name: PersonName? = nil, signUpToken: BearerToken? = nil,
        userId: String? = nil, details: AccountDetails? = nil, anonymousSession: BearerToken? = nil,
        clientAddress: String? = nil, clientDevice: String? = nil, clientName: String? = nil
    ) {
        self.provider = provider
        self.idToken = idToken
        self.nonce = nonce
        self.authorizationCode = authorizationCode
        self.codeVerifier = codeVerifier
        self.redirectURI = redirectURI
        self.name = name
        self.signUpToken = signUpToken
        self.userId = userId
        self.details = details
        self.anonymousSession = anonymousSession
        self.clientAddress = clientAddress
        self.clientDevice = clientDevice
        self.clientName = clientName
    }
}

/// An external sign-in's answer: a session, a second-factor challenge, or a sign-up to complete.
public struct IdentityExternalLoginAnswer: Codable, Sendable, Equatable {
    public var accountSession: IdentityAccountSession?
    public var challenge: IdentitySecondFactorChallenge?
    public var signUp: IdentityExternalSignUp?
    /// Whether this sign-in created the account.
    public var created: Bool

    public init(accountSession: IdentityAccountSession? = nil, challenge: IdentitySecondFactorChallenge? = nil, signUp: IdentityExternalSignUp? = nil, created: Bool = false) {
        self.accountSession = accountSession
        self.challenge = challenge
        self.signUp = signUp
        self.created = created
    }
}

/// A first sign-in whose account cannot be made from what the provider gave: the required values missing (each
/// named), what the provider did give (to fill the form with), and a short-lived, single-use token that stands for
/// the verified identity when the sign-up is sent again with the values.
public struct IdentityExternalSignUp: Codable, Sendable, Equatable {
    public var token: BearerToken
    public var expiresAt: Timestamp
    public var provider: String
    public var missing: [AccountFieldError]
    /// The provider's: `userId` (its address, unless taken or not an address the deployment uses), `email`, `name`.
    public var details: AccountDetails

    public init(token: BearerToken, expiresAt: Timestamp, provider: String, missing: [AccountFieldError], details: AccountDetails) {
        self.token = token
        self.expiresAt = expiresAt
        self.provider = provider
        self.missing = missing
        self.details = details
    }
}

/// Links an external identity to the signed-in account (security-related: the privileged window, or the current
/// password). The identity is given as for a sign-in: a native ID token, or a web flow's code.
public struct IdentityLinkIdentityRequest: Codable, Sendable {
    public var token: BearerToken
    public var currentPassword: SecretString?
    public var provider: String
    public var idToken: SecretString?
    public var nonce: SecretString?
    public var authorizationCode: SecretString?
    public var codeVerifier: SecretString?
    public var redirectURI: String?

    public init(
        token: BearerToken, currentPassword: SecretString? = nil, provider: String, idToken: SecretString? = nil, nonce: SecretString? = nil,
        authorizationCode: SecretString? = nil, codeVerifier: SecretString? = nil, redirectURI: String? = nil
    ) {
        self.token = token
        self.currentPassword = currentPassword
        self.provider = provider
        self.idToken = idToken
        self.nonce = nonce
        self.authorizationCode = authorizationCode
        self.codeVerifier = codeVerifier
        self.redirectURI = redirectURI
    }
}

/// Unlinks one of the signed-in account's identities (security-related).
public struct IdentityUnlinkIdentityRequest: Codable, Sendable {
    public var token: BearerToken
    public var currentPassword: SecretString?
    public var identityId: String

    public init(token: BearerToken, currentPassword: SecretString? = nil, identityId: String) {
        self.token = token
        self.currentPassword = currentPassword
        self.identityId = identityId
    }
}

/// One linked identity, as its owner sees it.
public struct IdentityExternalIdentity: Codable, Sendable, Equatable {
    public var id: String
    public var provider: String
    public var email: String?
    public var emailVerified: Bool
    public var createdAt: Timestamp
    public var lastUsedAt: Timestamp?

    public init(id: String, provider: String, email: String?, emailVerified: Bool, createdAt: Timestamp, lastUsedAt: Timestamp?) {
        self.id = id
        self.provider = provider
        self.email = email
        self.emailVerified = emailVerified
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

public struct IdentityExternalIdentities: Codable, Sendable, Equatable {
    public var identities: [IdentityExternalIdentity]

    public init(identities: [IdentityExternalIdentity]) {
        self.identities = identities
    }
}

/// The providers a deployment offers, for sign-in pages.
public struct IdentityProviderList: Codable, Sendable, Equatable {
    public struct Provider: Codable, Sendable, Equatable {
        public var name: String
        public var displayName: String

        public init(name: String, displayName: String) {
            self.name = name
            self.displayName = displayName
        }
    }

    public var providers: [Provider]

    public init(providers: [Provider]) {
        self.providers = providers
    }
}

/// Where to send a browser to sign in with a provider (the authorization code flow with PKCE): the caller makes
/// `state`, `nonce` and the verifier whose S256 `codeChallenge` this carries, and keeps them for the callback.
public struct IdentityAuthorizationRequest: Codable, Sendable {
    public var provider: String
    public var redirectURI: String
    public var state: String
    public var nonce: String
    public var codeChallenge: String

    public init(provider: String, redirectURI: String, state: String, nonce: String, codeChallenge: String) {
        self.provider = provider
        self.redirectURI = redirectURI
        self.state = state
        self.nonce = nonce
        self.codeChallenge = codeChallenge
    }
}

public struct IdentityAuthorizationURL: Codable, Sendable, Equatable {
    public var url: String

    public init(url: String) {
        self.url = url
    }
}

import Crypto
import Foundation
import KontoModel

/// An external identity provider an operator configured (`KONTO_IDENTITY_PROVIDERS`): an OpenID Connect provider, or
/// Sign in with Apple, whose client secret Konto signs itself.
public struct IdentityProvider: Sendable {
    /// How Konto authenticates to the provider's token and revocation endpoints.
    public enum ClientAuthentication: Sendable {
        /// A client secret the provider issued (`client_secret_post`).
        case secret(SecretString)
        /// Apple's: an ES256 JWT Konto signs with the team's key (iss = team id, sub = client id, kid = key id).
        case appleKey(teamId: String, keyId: String, privateKey: P256.Signing.PrivateKey)
        /// None: a public client (the native flow only needs the provider's keys).
        case none
    }

    /// Lower-case letters, digits and dashes, unique: in URLs (`{console path}/oidc/{name}/callback`) and stored with each
    /// linked identity, so it should not change once used.
    public var name: String
    /// What the console's "Continue with …" button says.
    public var displayName: String
    /// The issuer; its `/.well-known/openid-configuration` gives the endpoints and keys, and ID tokens' `iss` must be it.
    public var issuer: String
    /// The client id of the web flow (the console); tokens minted for it are accepted too.
    public var clientId: String
    public var authentication: ClientAuthentication
    /// Requested at authorization (`openid` always).
    public var scopes: [String]
    /// The `aud` values accepted besides ``clientId``: the native apps' client ids (an iOS app's bundle id at Apple).
    public var audiences: [String]
    /// Whether the ID token's `nonce` is the SHA-256 (hex) of the nonce the client holds, as Apple's native flow
    /// requires (the app hands Apple the hash and keeps the nonce); otherwise the nonce itself.
    public var hashedNonce: Bool
    /// Whether this is Apple: the name comes beside the token (the first time only), `email_verified` may be a
    /// string, and deletion revokes the refresh token kept for it.
    public var isApple: Bool
    /// Hosts besides the issuer's that its discovery may name for the keys, the token and the revocation endpoint
    /// (Google's keys and tokens are on googleapis.com, its issuer on accounts.google.com).
    public var endpointHosts: [String]

    public init(
        name: String,
        displayName: String? = nil,
        issuer: String,
        clientId: String,
        authentication: ClientAuthentication = .none,
        scopes: [String] = ["openid", "email", "profile"],
        audiences: [String] = [],
        hashedNonce: Bool = false,
        isApple: Bool = false,
        endpointHosts: [String] = []
    ) {
        self.name = name
        self.displayName = displayName ?? name
        self.issuer = issuer
        self.clientId = clientId
        self.authentication = authentication
        self.scopes = scopes.contains("openid") ? scopes : ["openid"] + scopes
        self.audiences = audiences
        self.hashedNonce = hashedNonce
        self.isApple = isApple
        self.endpointHosts = endpointHosts.map { $0.lowercased() }
    }

    /// Every `aud` an ID token may be minted for.
    public var acceptedAudiences: Set<String> { Set([clientId] + audiences) }

    /// Apple's issuer.
    public static let appleIssuer = "https://appleid.apple.com"
}

/// The configured providers and the linking rule, as read from the providers file.
public struct IdentityProviders: Sendable {
    public var providers: [IdentityProvider]
    /// Whether a first sign-in whose provider vouches for the address (`email_verified`) joins the account whose
    /// verified userId is that address, instead of being refused as taken. Off unless the operator turns it on:
    /// a provider that vouches wrongly would hand it the account.
    public var linkByVerifiedEmail: Bool

    public init(_ providers: [IdentityProvider] = [], linkByVerifiedEmail: Bool = false) {
        self.providers = providers
        self.linkByVerifiedEmail = linkByVerifiedEmail
    }

    public subscript(name: String) -> IdentityProvider? {
        providers.first { $0.name == name }
    }

    public static let none = IdentityProviders()
}

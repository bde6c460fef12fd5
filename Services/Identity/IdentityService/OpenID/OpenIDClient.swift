import Crypto
import Foundation
import KontoContracts

/// An application that signs its users in with Konto as their OpenID Provider, registered by the operator in the
/// clients file (`KONTO_IDENTITY_OIDC_CLIENTS`, ``OpenIDClientsLoader``) or through the admin API (``StoredOpenIDClient``).
public struct OpenIDClient: Sendable, Equatable {
    /// How a confidential client proves itself at the token endpoint (a public one does not: PKCE binds its code).
    public enum Authentication: Sendable, Equatable {
        /// A public client (a native app, a browser app): no secret it could keep.
        case none
        /// `client_secret_basic` or `client_secret_post`; only the secret's SHA-256 is kept in memory.
        case secret(method: String, digest: [UInt8])
        /// `private_key_jwt` (RFC 7523): an assertion signed with one of these public keys.
        case privateKeyJWT(keys: [IdentityJSONWebKey])

        public var method: String {
            switch self {
            case .none: "none"
            case .secret(let method, _): method
            case .privateKeyJWT: "private_key_jwt"
            }
        }
    }

    public var id: String
    /// What the consent page calls it.
    public var name: String
    public var authentication: Authentication
    public var isConfidential: Bool { if case .none = authentication { false } else { true } }
    /// Matched exactly, character for character (OAuth 2.1 section 2.3.1).
    public var redirectURIs: [String]
    public var postLogoutRedirectURIs: [String]
    /// What it may ask for; `openid` always among them.
    public var scopes: Set<String>
    /// The deployment's own application: no consent page.
    public var isFirstParty: Bool
    /// `ES256` (default) or `RS256`: how its ID tokens are signed.
    public var idTokenAlgorithm: String
    /// Pairwise subject identifiers (OpenID Connect Core 8.1): the sector its `sub` is computed for; nil: the public
    /// `sub`, the accountId.
    public var sectorIdentifier: String?
    /// During a rotation's overlap (the admin API's clients): the previous secret's SHA-256, still accepted.
    public var previousSecretDigest: [UInt8]?
    public var source: IdentityOpenIDClientSource = .file

    public init(
        id: String, name: String, authentication: Authentication, redirectURIs: [String], postLogoutRedirectURIs: [String] = [], scopes: Set<String>,
        isFirstParty: Bool = false, idTokenAlgorithm: String = "ES256", sectorIdentifier: String? = nil
    ) {
        self.id = id
        self.name = name
        self.authentication = authentication
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.scopes = scopes
        self.isFirstParty = isFirstParty
        self.idTokenAlgorithm = idTokenAlgorithm
        self.sectorIdentifier = sectorIdentifier
    }

    /// The scopes Konto knows: OpenID Connect's and refresh tokens'.
    public static let supportedScopes: Set<String> = ["openid", "profile", "email", "offline_access"]
    public static let secretMethods: Set<String> = ["client_secret_basic", "client_secret_post"]

    /// Whether `secret` is this client's (or, during a rotation's overlap, was), compared in constant time on digests
    /// of equal length; both compared, whichever matches.
    public func accepts(secret: String) -> Bool {
        guard case .secret(_, let digest) = authentication else { return false }
        let given = Array(SHA256.hash(data: Data(secret.utf8)))
        let current = ConstantTime.equal(given, digest)
        let previous = previousSecretDigest.map { ConstantTime.equal(given, $0) } ?? false
        return current || previous
    }
}

/// The registered clients, by id.
public struct OpenIDClients: Sendable, Equatable {
    public let clients: [String: OpenIDClient]

    public init(_ clients: [OpenIDClient]) {
        self.clients = Dictionary(clients.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    public static let none = OpenIDClients([])

    public subscript(id: String) -> OpenIDClient? { clients[id] }
}

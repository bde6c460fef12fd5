import Foundation

/// Konto as an OpenID Provider (docs/OIDC.md): on when `KONTO_IDENTITY_OIDC_ISSUER` is set, with its signing keys
/// (`KONTO_IDENTITY_OIDC_KEYS`) and registered clients (`KONTO_IDENTITY_OIDC_CLIENTS`).
public struct OpenIDProviderSettings: Sendable, Equatable {
    /// What every token's `iss` says and relying parties compare exactly: the gateway's public URL.
    public var issuer: String
    public var keys: OpenIDSigningKeys
    public var clients: OpenIDClients
    /// How long a code may wait for its exchange (RFC 6749 4.1.2 advises at most ten minutes; a browser's redirect
    /// and the client's token request take seconds).
    public var codeLifetime: Duration = .seconds(60)
    /// Access tokens are short-lived: they are JWTs a resource server may check offline, so revoking one takes effect
    /// there only at its expiry (Konto's own API checks the grant on every call).
    public var accessTokenLifetime: Duration = .seconds(5 * 60)
    /// A refresh token not used for this long lapses; a grant lasts at most the absolute lifetime.
    public var refreshIdleLifetime: Duration = .seconds(30 * 24 * 3_600)
    public var refreshAbsoluteLifetime: Duration = .seconds(90 * 24 * 3_600)
    /// How many clients the admin API may register (`KONTO_IDENTITY_OIDC_CLIENTS_MAX`; the file's do not count): every
    /// listing reads them all, so a key with `clients:write` must not add them without end.
    public var maxStoredClients = 100

    /// - Throws: a problem naming what to fix: an issuer that is no https URL (http only on a loopback host), a client
    ///   whose ID token algorithm has no key.
    public init(issuer: String, keys: OpenIDSigningKeys, clients: OpenIDClients = .none) throws(OpenIDKeyProblem) {
        guard Self.isIssuer(issuer) else {
            throw OpenIDKeyProblem("the issuer must be an https URL without query or fragment (http only on localhost or 127.0.0.1), e.g. https://accounts.example.org")
        }
        for client in clients.clients.values.sorted(by: { $0.id < $1.id }) where keys.signing(client.idTokenAlgorithm) == nil {
            throw OpenIDKeyProblem("client \"\(client.id)\" wants \(client.idTokenAlgorithm) ID tokens, and no \(client.idTokenAlgorithm) key is configured")
        }
        // Relying parties append `/.well-known/openid-configuration`: one form of the URL, without the trailing slash.
        self.issuer = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        self.keys = keys
        self.clients = clients
    }

    static func isIssuer(_ text: String) -> Bool {
        ProviderURL.isAcceptable(text, allowingQuery: false)
    }
}

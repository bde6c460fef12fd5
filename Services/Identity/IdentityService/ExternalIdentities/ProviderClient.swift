import Crypto
import Foundation
import JWTKit
import KontoContracts
import KontoModel
import Logging

/// Konto as a client of the configured providers: the authorization URL of the web flow, the code exchange at the
/// token endpoint, ID token verification and revocation, with each provider's client authentication (its secret, or
/// Apple's ES256 client-secret JWT, signed here for each request: short-lived, never stored).
public final class ProviderClient: Sendable {
    public let providers: IdentityProviders
    let directory: ProviderDirectory
    let verifier: IdentityTokenVerifier
    let fetcher: any ProviderFetcher
    let logger: Logger
    /// Apple's audience for client secrets, whatever the issuer (its stand-in in tests included).
    static let appleAudience = "https://appleid.apple.com"
    static let responseLimit = 64 * 1024

    public init(providers: IdentityProviders, fetcher: any ProviderFetcher = HTTPProviderFetcher(), keyRefreshCooldown: Duration = .seconds(60), clock: @escaping @Sendable () -> Timestamp = { .now }, logger: Logger) {
        self.providers = providers
        self.fetcher = fetcher
        self.directory = ProviderDirectory(providers: providers, fetcher: fetcher, keyRefreshCooldown: keyRefreshCooldown, clock: clock, logger: logger)
        self.verifier = IdentityTokenVerifier(directory: directory)
        self.logger = logger
    }

    /// What the token endpoint answered that Konto uses.
    struct TokenResponse: Decodable {
        var idToken: String?
        var refreshToken: String?

        enum CodingKeys: String, CodingKey {
            case idToken = "id_token"
            case refreshToken = "refresh_token"
        }
    }

    /// The web flow's authorization URL: code flow, PKCE S256, the caller's state and nonce; Apple's `form_post`
    /// (it posts the code, and the first time the user's name, to the callback).
    func authorizationURL(_ provider: IdentityProvider, redirectURI: String, state: String, nonce: String, codeChallenge: String) async throws(ServiceError) -> String {
        let metadata = try await directory.metadata(for: provider)
        guard let endpoint = metadata.authorizationEndpoint, var components = URLComponents(string: endpoint) else {
            throw .identityProviderUnavailable
        }
        var query = components.queryItems ?? []
        query += [
            URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "client_id", value: provider.clientId),
            URLQueryItem(name: "redirect_uri", value: redirectURI),
            URLQueryItem(name: "scope", value: provider.scopes.joined(separator: " ")),
            URLQueryItem(name: "state", value: state),
            URLQueryItem(name: "nonce", value: nonce),
            URLQueryItem(name: "code_challenge", value: codeChallenge),
            URLQueryItem(name: "code_challenge_method", value: "S256"),
        ]
        if provider.isApple {
            query.append(URLQueryItem(name: "response_mode", value: "form_post"))
        }
        components.percentEncodedQuery = FormEncoding.encode(query.map { ($0.name, $0.value ?? "") })
        guard let url = components.string else { throw .identityProviderUnavailable }
        return url
    }

    /// Exchanges an authorization code at the provider's token endpoint as `clientId` (the web flow's, or for
    /// Apple's native flow the app's), with the PKCE verifier and redirect URI when the web flow used them.
    /// - Throws: `account.invalidIdentityToken` when the provider refuses the code; `identity.providerUnavailable`
    ///   when it cannot be reached.
    func exchange(_ code: String, provider: IdentityProvider, clientId: String, codeVerifier: String?, redirectURI: String?) async throws(ServiceError) -> TokenResponse {
        let metadata = try await directory.metadata(for: provider)
        guard let endpoint = metadata.tokenEndpoint else { throw .identityProviderUnavailable }
        var form = [("grant_type", "authorization_code"), ("code", code)]
        if let redirectURI { form.append(("redirect_uri", redirectURI)) }
        if let codeVerifier { form.append(("code_verifier", codeVerifier)) }
        form += try await clientAuthentication(provider, clientId: clientId)
        let answer: (status: Int, body: [UInt8])
        do {
            answer = try await fetcher.post(endpoint, form: form, limit: Self.responseLimit)
        } catch {
            logger.warning("identity provider token endpoint unreachable", metadata: ["konto.provider": "\(provider.name)", "konto.error": "\(error)"])
            throw .identityProviderUnavailable
        }
        switch answer.status {
        case 200:
            guard let response = try? JSONDecoder().decode(TokenResponse.self, from: Data(answer.body)) else { throw .identityProviderUnavailable }
            return response
        case 400, 401:
            // RFC 6749 §5.2: invalid_grant (a used, expired or foreign code), invalid_client (our credentials).
            let error = (try? JSONDecoder().decode([String: String].self, from: Data(answer.body)))?["error"] ?? "unknown"
            if error == "invalid_client" {
                logger.error("identity provider refused Konto's client credentials", metadata: ["konto.provider": "\(provider.name)"])
                throw .identityProviderUnavailable
            }
            throw ServiceError(AccountError(code: .invalidIdentityToken, message: "The identity provider refused the authorization code (\(error.prefix(40)))."))
        default:
            logger.warning("identity provider token endpoint failed", metadata: ["konto.provider": "\(provider.name)", "konto.status": "\(answer.status)"])
            throw .identityProviderUnavailable
        }
    }

    /// Revokes a refresh token at the provider's revocation endpoint (RFC 7009; Apple's `/auth/revoke`). Returns
    /// false when the provider offers none (nothing to do).
    func revoke(_ token: String, provider: IdentityProvider, clientId: String) async throws(ProviderFetchError) -> Bool {
        let metadata: ProviderMetadata
        do {
            metadata = try await directory.metadata(for: provider)
        } catch {
            throw ProviderFetchError("the provider's discovery document could not be had")
        }
        guard let endpoint = metadata.revocationEndpoint else { return false }
        var form = [("token", token), ("token_type_hint", "refresh_token")]
        do {
            form += try await clientAuthentication(provider, clientId: clientId)
        } catch {
            throw ProviderFetchError("the client secret could not be made")
        }
        let answer = try await fetcher.post(endpoint, form: form, limit: Self.responseLimit)
        guard answer.status == 200 else { throw ProviderFetchError("the revocation endpoint answered \(answer.status)") }
        return true
    }

    /// The form fields that authenticate Konto (`client_secret_post`).
    func clientAuthentication(_ provider: IdentityProvider, clientId: String) async throws(ServiceError) -> [(String, String)] {
        switch provider.authentication {
        case let .secret(secret):
            return [("client_id", clientId), ("client_secret", secret.value)]
        case let .appleKey(teamId, keyId, privateKey):
            return [("client_id", clientId), ("client_secret", try await Self.appleClientSecret(teamId: teamId, keyId: keyId, privateKey: privateKey, clientId: clientId, at: Date()))]
        case .none:
            return [("client_id", clientId)]
        }
    }

    /// Apple's client secret: an ES256 JWT with `kid` the key's id, `iss` the team, `sub` the client id, `aud`
    /// Apple, valid five minutes (Apple allows six months; a short one is worthless to whoever sees it).
    static func appleClientSecret(teamId: String, keyId: String, privateKey: P256.Signing.PrivateKey, clientId: String, at now: Date) async throws(ServiceError) -> String {
        // Whole seconds and a single audience string, as Apple's documentation shows them (jwt-kit's date claims
        // would carry fractions).
        struct Claims: JWTPayload {
            var iss: String
            var iat: Int
            var exp: Int
            var aud: String
            var sub: String
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        do {
            let keys = JWTKeyCollection()
            await keys.add(ecdsa: try ES256PrivateKey(backing: privateKey), kid: JWKIdentifier(string: keyId))
            let issuedAt = Int(now.timeIntervalSince1970)
            let claims = Claims(iss: teamId, iat: issuedAt, exp: issuedAt + 300, aud: appleAudience, sub: clientId)
            return try await keys.sign(claims, kid: JWKIdentifier(string: keyId))
        } catch {
            throw ServiceError(code: .identityProviderUnavailable, message: "Apple's client secret could not be signed.")
        }
    }
}

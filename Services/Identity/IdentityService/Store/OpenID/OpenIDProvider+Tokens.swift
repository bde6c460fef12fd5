import Crypto
import Foundation
import JWTKit
import KontoContracts
import KontoModel
import Logging
import KontoWebAuthn

extension OpenIDProvider {
    /// The token endpoint (RFC 6749 3.2, OpenID Connect Core 3.1.3): `authorization_code` with PKCE, and
    /// `refresh_token` with rotation. Each refusal is an OAuth error; a code or refresh token used twice revokes what
    /// it gave (RFC 9700 4.14.2, RFC 6749 4.1.2) and is audited.
    func token(_ request: IdentityOpenIDTokenRequest) async throws(ServiceError) -> IdentityOpenIDTokenResponse {
        guard let settings else { return IdentityOpenIDTokenResponse(error: Self.notProvider) }
        let now = clock()
        guard let client = try await authenticate(request.client, settings: settings, at: now) else {
            return IdentityOpenIDTokenResponse(error: Self.invalidClient)
        }
        if let duplicated = request.duplicated {
            return IdentityOpenIDTokenResponse(error: IdentityOpenIDError("invalid_request", "The parameter \(duplicated) is given more than once."))
        }
        switch request.grantType {
        case "authorization_code": return try await exchangeCode(request, client: client, settings: settings, at: now)
        case "refresh_token": return try await refresh(request, client: client, settings: settings, at: now)
        case nil: return IdentityOpenIDTokenResponse(error: IdentityOpenIDError("invalid_request", "grant_type is missing."))
        default: return IdentityOpenIDTokenResponse(error: IdentityOpenIDError("unsupported_grant_type", "Only authorization_code and refresh_token are supported."))
        }
    }

    private static let invalidGrant = IdentityOpenIDError("invalid_grant", "The code or refresh token is invalid, expired, used, or not this client's.")

    private func exchangeCode(_ request: IdentityOpenIDTokenRequest, client: OpenIDClient, settings: OpenIDProviderSettings, at now: Timestamp) async throws(ServiceError) -> IdentityOpenIDTokenResponse {
        guard let code = request.code?.value, !code.isEmpty, code.utf8.count <= 256 else {
            return IdentityOpenIDTokenResponse(error: IdentityOpenIDError("invalid_request", "code is missing."))
        }
        guard let redirectURI = request.redirectURI else {
            return IdentityOpenIDTokenResponse(error: IdentityOpenIDError("invalid_request", "redirect_uri is missing."))
        }
        // RFC 7636 4.1: 43 to 128 unreserved characters. A missing or malformed verifier uses the code up all the same
        // (below): whoever holds a stolen code gets one try.
        let verifier = request.codeVerifier?.value ?? ""
        let wellFormed = (43...128).contains(verifier.utf8.count) && verifier.utf8.allSatisfy(Self.isUnreserved)
        let refreshToken = SecretToken.generate()
        let grantId = UUID().uuidString.lowercased()
        let redemption = try await stored { () async throws(IdentityStorageError) in
            try await storage.redeemAuthorizationCode(codeHash: SecretToken.hash(code), at: now) { stored in
                guard stored.clientId == client.id, stored.redirectURI == redirectURI, wellFormed,
                      ConstantTime.equal(Array(Base64URL.encode(Array(SHA256.hash(data: Data(verifier.utf8)))).utf8), Array(stored.codeChallenge.utf8))
                else { return nil }
                let offline = stored.scopes.contains("offline_access")
                let idle = now.adding(offline ? settings.refreshIdleLifetime : settings.accessTokenLifetime)
                let absolute = now.adding(settings.refreshAbsoluteLifetime)
                let grant = StoredOpenIDGrant(
                    id: grantId, accountId: stored.accountId, clientId: client.id, sessionId: stored.sessionId, scopes: stored.scopes, authTime: stored.authTime,
                    assuranceLevel: stored.assuranceLevel, signInMethod: stored.signInMethod, credentialVersion: stored.credentialVersion, createdAt: now,
                    idleExpiresAt: min(idle, absolute), absoluteExpiresAt: absolute
                )
                return NewOpenIDGrant(
                    grant: grant,
                    refreshToken: offline ? StoredRefreshToken(tokenHash: SecretToken.hash(refreshToken), expiresAt: min(idle, absolute)) : nil
                )
            }
        }
        switch redemption {
        case .unknown, .refused:
            return IdentityOpenIDTokenResponse(error: Self.invalidGrant)
        case .reused(let accountId, let clientId, let revokedGrant):
            let entry = record("oidc.code_reused", accountId: accountId, actor: .anonymous, clientId: clientId, at: now, facts: ["grantRevoked": "\(revokedGrant)"])
            try await stored { () async throws(IdentityStorageError) in try await storage.appendAudit([entry]) }
            logger.warning("authorization code used twice", metadata: ["konto.account_id": "\(accountId)", "konto.client_id": "\(clientId)"])
            return IdentityOpenIDTokenResponse(error: Self.invalidGrant)
        case .redeemed(let code, let grant):
            let tokens = try await tokens(for: grant, client: client, nonce: code.nonce, refreshToken: grant.scopes.contains("offline_access") ? refreshToken : nil, at: now)
            return IdentityOpenIDTokenResponse(tokens: tokens)
        }
    }

    private func refresh(_ request: IdentityOpenIDTokenRequest, client: OpenIDClient, settings: OpenIDProviderSettings, at now: Timestamp) async throws(ServiceError) -> IdentityOpenIDTokenResponse {
        guard let presented = request.refreshToken?.value, !presented.isEmpty, presented.utf8.count <= 256 else {
            return IdentityOpenIDTokenResponse(error: IdentityOpenIDError("invalid_request", "refresh_token is missing."))
        }
        let next = SecretToken.generate()
        // The new token lapses after the idle lifetime, never after the grant's absolute end (checked in the step).
        let replacement = StoredRefreshToken(tokenHash: SecretToken.hash(next), expiresAt: now.adding(settings.refreshIdleLifetime))
        let rotation = try await stored { () async throws(IdentityStorageError) in
            try await storage.rotateRefreshToken(tokenHash: SecretToken.hash(presented), at: now, replacement: replacement) { $0.clientId == client.id }
        }
        switch rotation {
        case .unknown, .refused:
            return IdentityOpenIDTokenResponse(error: Self.invalidGrant)
        case .reused(let grant):
            let entry = record("oidc.refresh_reused", accountId: grant.accountId, actor: .anonymous, clientId: grant.clientId, at: now)
            try await stored { () async throws(IdentityStorageError) in try await storage.appendAudit([entry]) }
            logger.warning("refresh token used twice", metadata: ["konto.account_id": "\(grant.accountId)", "konto.client_id": "\(grant.clientId)"])
            return IdentityOpenIDTokenResponse(error: Self.invalidGrant)
        case .rotated(var grant):
            if let scope = request.scope {
                // A narrower access token (RFC 6749 6); the grant keeps its scopes.
                let asked = Set(scope.split(separator: " ").map(String.init))
                guard !asked.isEmpty, asked.isSubset(of: grant.scopes) else {
                    return IdentityOpenIDTokenResponse(error: IdentityOpenIDError("invalid_scope", "The scope asked for is more than was granted."))
                }
                grant.scopes = grant.scopes.filter(asked.contains)
            }
            return IdentityOpenIDTokenResponse(tokens: try await tokens(for: grant, client: client, nonce: nil, refreshToken: next, at: now))
        }
    }

    /// RFC 3986's unreserved characters, which a PKCE verifier is made of.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }
}

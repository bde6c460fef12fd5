import Foundation
import JWTKit
import KontoContracts
import KontoModel
import Logging

extension OpenIDProvider {
    /// An access token presented to the userinfo endpoint or Konto's API: valid when Konto signed it as an access
    /// token, it has not expired, and its grant still lives (the user or the client has not revoked it, the password
    /// has not changed, the account is there). `invalid_token` (401) otherwise, the same for each.
    func accessGrant(_ request: IdentityOpenIDAccessTokenRequest) async throws(ServiceError) -> IdentityOpenIDAccessGrant {
        guard settings != nil else { return IdentityOpenIDAccessGrant(error: Self.notProvider) }
        let now = clock()
        guard let (claims, grant, client) = try await liveAccessToken(request.token.value, at: now) else {
            return IdentityOpenIDAccessGrant(error: IdentityOpenIDError("invalid_token", "The access token is invalid or expired.", status: 401))
        }
        var email: String?
        var verified: Bool?
        let credential = try await stored { () async throws(IdentityStorageError) in try await storage.credential(accountId: grant.accountId) }
        if let credential, grant.scopes.contains("email"), configuration.userIdType == .emailAddress {
            email = credential.userId
            verified = credential.emailVerifiedAt != nil
        }
        return IdentityOpenIDAccessGrant(
            accountId: grant.accountId, subject: claims.sub.value, clientId: client.id, scopes: claims.scope.split(separator: " ").map(String.init),
            expiresAt: Timestamp(claims.exp.value), email: email, emailVerified: verified, account: credential?.facts(userIdType: configuration.userIdType)
        )
    }

    /// The claims, grant and client of a live access token; nil for anything else.
    func liveAccessToken(_ token: String, at now: Timestamp) async throws(ServiceError) -> (AccessTokenClaims, StoredOpenIDGrant, OpenIDClient)? {
        guard let settings, let issuer, let claims = await issuer.value.verifiedAccessToken(token), now.date < claims.exp.value else { return nil }
        let grantId = claims.gid
        guard let grant = try await stored({ () async throws(IdentityStorageError) in try await storage.openIDGrant(id: grantId, at: now) }),
              grant.clientId == claims.clientId, let client = try await registeredClient(grant.clientId, settings: settings, at: now)
        else { return nil }
        return (claims, grant, client)
    }

    /// RFC 7662: what a client learns of one of its own tokens (an access or a refresh token); another client's, or
    /// one that is no longer valid, is just inactive.
    func introspect(_ request: IdentityOpenIDTokenQuery) async throws(ServiceError) -> IdentityOpenIDIntrospection {
        guard let settings else { return IdentityOpenIDIntrospection(active: false, error: Self.notProvider) }
        let now = clock()
        guard let client = try await authenticate(request.client, settings: settings, at: now) else {
            return IdentityOpenIDIntrospection(active: false, error: Self.invalidClient)
        }
        guard client.isConfidential else {
            return IdentityOpenIDIntrospection(active: false, error: IdentityOpenIDError("unauthorized_client", "Introspection is for confidential clients.", status: 400))
        }
        guard let token = request.token?.value, !token.isEmpty, token.utf8.count <= 4_096 else { return .inactive }
        if let (claims, grant, _) = try await liveAccessToken(token, at: now) {
            guard grant.clientId == client.id else { return .inactive }
            return IdentityOpenIDIntrospection(
                active: true, scope: claims.scope, clientId: grant.clientId, subject: claims.sub.value, tokenType: "Bearer",
                expiresAt: Timestamp(claims.exp.value), issuedAt: Timestamp(claims.iat.value), issuer: settings.issuer
            )
        }
        // A refresh token is active only while it is its grant's current one, unexpired: a rotated one is not.
        let hash = SecretToken.hash(token)
        guard let live = try await stored({ () async throws(IdentityStorageError) in try await storage.openIDGrant(currentRefreshTokenHash: hash, at: now) }),
              live.clientId == client.id, let issuer
        else { return .inactive }
        let subject = await issuer.value.subject(accountId: live.accountId, for: client)
        return IdentityOpenIDIntrospection(
            active: true, scope: live.scopes.joined(separator: " "), clientId: client.id, subject: subject, tokenType: "refresh_token",
            expiresAt: live.idleExpiresAt < live.absoluteExpiresAt ? live.idleExpiresAt : live.absoluteExpiresAt, issuedAt: live.lastRefreshedAt ?? live.createdAt,
            issuer: settings.issuer
        )
    }

    /// RFC 7009: a client revokes one of its own tokens, and with it the whole grant (its access tokens stop working at
    /// Konto's API at once, its refresh tokens end). An unknown token, or another client's, changes nothing and is
    /// answered the same (RFC 7009 2.2).
    func revoke(_ request: IdentityOpenIDTokenQuery) async throws(ServiceError) -> IdentityOpenIDRevocation {
        guard let settings else { return IdentityOpenIDRevocation(error: Self.notProvider) }
        let now = clock()
        guard let client = try await authenticate(request.client, settings: settings, at: now) else {
            return IdentityOpenIDRevocation(error: Self.invalidClient)
        }
        guard let token = request.token?.value, !token.isEmpty, token.utf8.count <= 4_096 else {
            return IdentityOpenIDRevocation(error: IdentityOpenIDError("invalid_request", "token is missing."))
        }
        var grant: StoredOpenIDGrant?
        if let issuer, let claims = await issuer.value.verifiedAccessToken(token), claims.clientId == client.id {
            let grantId = claims.gid
            grant = try await stored { () async throws(IdentityStorageError) in try await storage.openIDGrant(id: grantId, at: now) }
        } else {
            let hash = SecretToken.hash(token)
            grant = try await stored { () async throws(IdentityStorageError) in try await storage.openIDGrant(refreshTokenHash: hash, clientId: client.id) }
        }
        guard let grant else { return IdentityOpenIDRevocation() }
        let entry = record("oidc.token_revoked", accountId: grant.accountId, actor: .anonymous, clientId: client.id, at: now)
        _ = try await stored { () async throws(IdentityStorageError) in try await storage.revokeOpenIDGrant(id: grant.id, clientId: client.id, audit: [entry]) }
        return IdentityOpenIDRevocation()
    }
}

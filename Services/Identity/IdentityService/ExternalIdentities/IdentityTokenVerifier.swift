import Foundation
import JWTKit
import KontoContracts
import KontoModel
import KontoWebAuthn

/// Verifies a provider's ID token completely (OpenID Connect Core §3.1.3.7): its size, its header's algorithm (an
/// asymmetric one the provider publishes, never `none` or HMAC, and the key's own when its JWK names one), its
/// signature against the provider's published key, `iss`, `aud` (and `azp` when there are several), `exp` and
/// `iat` with a bounded clock skew, `sub`, and the nonce (SHA-256 hex for Apple's native flow). Replay is
/// refused by the caller, which remembers each nonce until the token expires.
struct IdentityTokenVerifier: Sendable {
    let directory: ProviderDirectory
    /// How far the provider's clock may be ahead of Identity's (`iat`) or behind it (`exp`).
    var clockSkew: Double = 60
    /// The furthest ahead an `exp` may lie: ID tokens live minutes to a day (Apple's a day, most providers' an hour).
    /// Bounding it also bounds how long a nonce is remembered, and keeps a hostile provider's far-future date from
    /// reaching a conversion or a timestamp column.
    static let maximumLifetime: Double = 7 * 86_400
    /// Larger tokens are refused before any parsing (Apple's are under 1 KiB, most providers' under 2).
    static let maximumTokenBytes = 8 * 1024
    static let asymmetricAlgorithms: Set<String> = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]

    /// - Parameters:
    ///   - nonce: what the client holds; nil refuses the token (`missingNonce`).
    ///   - hashedNonce: whether the token carries the nonce's SHA-256 (hex) rather than the nonce (Apple's native flow).
    ///   - audiences: the `aud` values accepted.
    ///   - checkingNonce: false only for the ID token of a code exchange whose sign-in was verified already.
    func verify(_ token: String, provider: IdentityProvider, nonce: String?, hashedNonce: Bool, audiences: Set<String>, at now: Double, checkingNonce: Bool = true) async throws(ServiceError) -> VerifiedIdentity {
        guard token.utf8.count <= Self.maximumTokenBytes else { throw IdentityTokenRefusal.oversized.error }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerBytes = Base64URL.decodeIfValid(String(parts[0])),
              let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes)),
              let claimBytes = Base64URL.decodeIfValid(String(parts[1]))
        else { throw IdentityTokenRefusal.malformed.error }
        // RFC 7519 §4, RFC 7515 §4: a name twice in the header or the claims is refused (parsers disagree on which wins).
        for part in [headerBytes, claimBytes] {
            switch JSONDuplicateKeys.scan(part) {
            case .unique: break
            case .duplicate: throw IdentityTokenRefusal.duplicateClaim.error
            case .malformed: throw IdentityTokenRefusal.malformed.error
            }
        }
        let metadata = try await directory.metadata(for: provider)
        // Only asymmetric algorithms, and of those what the provider says it signs ID tokens with.
        guard Self.asymmetricAlgorithms.contains(header.alg),
              metadata.signingAlgorithms.map({ $0.contains(header.alg) }) ?? (header.alg == "RS256")
        else { throw IdentityTokenRefusal.unsupportedAlgorithm.error }
        guard !parts[2].isEmpty else { throw IdentityTokenRefusal.malformed.error }
        guard let (collection, keyAlgorithm) = try await directory.key(header.kid, of: provider) else {
            throw IdentityTokenRefusal.unknownKey.error
        }
        if let keyAlgorithm, keyAlgorithm != header.alg { throw IdentityTokenRefusal.unsupportedAlgorithm.error }
        let claims: ExternalIdentityClaims
        do {
            claims = try await collection.verify(token, as: ExternalIdentityClaims.self)
        } catch {
            throw IdentityTokenRefusal.badSignature.error
        }
        guard claims.iss == metadata.issuer, claims.iss == provider.issuer else { throw IdentityTokenRefusal.wrongIssuer.error }
        let tokenAudiences = claims.aud?.value ?? []
        guard let audience = tokenAudiences.first(where: audiences.contains) else { throw IdentityTokenRefusal.wrongAudience.error }
        // §3.1.3.7 (4, 5): with several audiences, the authorized party must be one of ours.
        if tokenAudiences.count > 1 || claims.azp != nil {
            guard let azp = claims.azp, audiences.contains(azp) else { throw IdentityTokenRefusal.wrongAudience.error }
        }
        guard let exp = claims.exp, exp.isFinite, exp + clockSkew > now else { throw IdentityTokenRefusal.expired.error }
        guard exp <= now + Self.maximumLifetime else { throw IdentityTokenRefusal.implausibleLifetime.error }
        guard let iat = claims.iat, iat.isFinite, iat <= now + clockSkew else { throw IdentityTokenRefusal.issuedInFuture.error }
        guard let subject = claims.sub, (1...255).contains(subject.utf8.count) else { throw IdentityTokenRefusal.missingSubject.error }
        if checkingNonce {
            guard let nonce, !nonce.isEmpty, nonce.utf8.count <= 512 else { throw IdentityTokenRefusal.missingNonce.error }
            let expected = hashedNonce ? SessionAuthority.digest(nonce) : nonce
            guard let claimed = claims.nonce, ConstantTime.equal(Array(claimed.utf8), Array(expected.utf8)) else {
                throw IdentityTokenRefusal.wrongNonce.error
            }
        }
        let email = claims.email.flatMap { (1...320).contains($0.utf8.count) ? $0 : nil }
        return VerifiedIdentity(
            provider: provider.name,
            subject: subject,
            email: email,
            emailVerified: email != nil && claims.emailVerified == true,
            givenName: claims.givenName.map { String($0.prefix(100)) },
            familyName: claims.familyName.map { String($0.prefix(100)) },
            audience: claims.azp.flatMap { audiences.contains($0) ? $0 : nil } ?? audience,
            expiresAt: exp
        )
    }

    private struct Header: Decodable {
        var alg: String
        var kid: String?
    }
}

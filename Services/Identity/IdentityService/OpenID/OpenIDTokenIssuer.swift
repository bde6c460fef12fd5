import Crypto
import Foundation
import JWTKit
import KontoModel

/// Mints the ID tokens Konto issues as an OpenID Provider (OpenID Connect Core 2), signed with the deployment's key of
/// the client's algorithm (ES256 unless it asked for RS256), the key's thumbprint in the header's `kid`.
public struct OpenIDTokenIssuer: Sendable {
    public let settings: OpenIDProviderSettings
    /// Keys the pairwise subjects: derived from Identity's data key, so a `sub` is the same on every replica and cannot
    /// be computed, or linked to the accountId, by anyone without it.
    let pairwiseKey: SymmetricKey
    /// One collection with every signing key, each under its `kid`.
    let signers: JWTKeyCollection

    public init(settings: OpenIDProviderSettings, pairwiseKey: SymmetricKey) async {
        self.settings = settings
        self.pairwiseKey = pairwiseKey
        let signers = JWTKeyCollection()
        for key in settings.keys.keys {
            switch key.material {
            case .es256(let privateKey): await signers.add(ecdsa: privateKey, kid: JWKIdentifier(string: key.keyId))
            case .rs256(let privateKey): await signers.add(rsa: privateKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: key.keyId))
            }
        }
        self.signers = signers
    }

    /// The account's `sub` for `client`: the accountId, or, for a client with a sector, a pairwise identifier
    /// (OpenID Connect Core 8.1): HMAC-SHA256 of the sector and the accountId, base64url, the same for every client of
    /// the sector and unlinkable across sectors.
    public func subject(accountId: String, for client: OpenIDClient) -> String {
        guard let sector = client.sectorIdentifier else { return accountId }
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(sector.lowercased())\u{0}\(accountId)".utf8), using: pairwiseKey)
        return OpenIDSigningKey.base64URL(Data(mac))
    }

    /// What an ID token says of the sign-in and the account.
    public struct Sign: Sendable {
        public var accountId: String
        public var client: OpenIDClient
        /// When the person signed in (the session's creation or last reauthentication).
        public var authTime: Date
        public var nonce: String?
        /// The session's assurance level: `acr` is `aal1` or `aal2`.
        public var assuranceLevel: Int
        /// How (RFC 8176): `pwd`, `otp`, `hwk`, `mfa`, …
        public var methods: [String]
        public var issuedAt: Date
        public var lifetime: Duration

        public init(accountId: String, client: OpenIDClient, authTime: Date, nonce: String?, assuranceLevel: Int, methods: [String], issuedAt: Date, lifetime: Duration = .seconds(300)) {
            self.accountId = accountId
            self.client = client
            self.authTime = authTime
            self.nonce = nonce
            self.assuranceLevel = assuranceLevel
            self.methods = methods
            self.issuedAt = issuedAt
            self.lifetime = lifetime
        }
    }

    public func idToken(_ sign: Sign) async throws -> String {
        guard let key = settings.keys.signing(sign.client.idTokenAlgorithm) else {
            throw OpenIDKeyProblem("no \(sign.client.idTokenAlgorithm) key")
        }
        // Whole seconds (NumericDate): a fraction would put `iat` past a relying party's clock, truncated, by up to a second.
        let issuedAt = Date(timeIntervalSince1970: sign.issuedAt.timeIntervalSince1970.rounded(.down))
        let claims = IDTokenClaims(
            iss: IssuerClaim(value: settings.issuer), sub: SubjectClaim(value: subject(accountId: sign.accountId, for: sign.client)),
            aud: AudienceClaim(value: [sign.client.id]), exp: ExpirationClaim(value: issuedAt.addingTimeInterval(TimeInterval(sign.lifetime.components.seconds))),
            iat: IssuedAtClaim(value: issuedAt), authTime: Int(sign.authTime.timeIntervalSince1970), nonce: sign.nonce,
            acr: "aal\(sign.assuranceLevel)", amr: sign.methods.isEmpty ? nil : sign.methods, azp: sign.client.id
        )
        var header = JWTHeader()
        header.alg = key.algorithm
        header.typ = "JWT"
        return try await signers.sign(claims, kid: JWKIdentifier(string: key.keyId), header: header)
    }
}

extension OpenIDTokenIssuer {
    /// What an access token (RFC 9068) says: the grant it belongs to (Konto's API checks it still lives), whose account
    /// by the client's `sub`, which client, which scopes.
    public struct Access: Sendable {
        public var grantId: String
        public var accountId: String
        public var client: OpenIDClient
        public var scopes: [String]
        public var authTime: Date
        public var assuranceLevel: Int
        public var issuedAt: Date
        public var lifetime: Duration

        public init(grantId: String, accountId: String, client: OpenIDClient, scopes: [String], authTime: Date, assuranceLevel: Int, issuedAt: Date, lifetime: Duration) {
            self.grantId = grantId
            self.accountId = accountId
            self.client = client
            self.scopes = scopes
            self.authTime = authTime
            self.assuranceLevel = assuranceLevel
            self.issuedAt = issuedAt
            self.lifetime = lifetime
        }
    }

    /// The media type RFC 9068 2.1 puts in an access token's header, so no ID token (signed by the same keys) passes
    /// for one.
    static let accessTokenType = "at+jwt"

    /// An access token as a JWT (RFC 9068): signed with the deployment's first key (ES256 where there is one), `aud`
    /// the issuer (Konto's API is its resource server), a `jti` of its own, the grant's id in `gid`.
    public func accessToken(_ access: Access) async throws -> String {
        guard let key = settings.keys.keys.first else { throw OpenIDKeyProblem("no signing key") }
        let issuedAt = Date(timeIntervalSince1970: access.issuedAt.timeIntervalSince1970.rounded(.down))
        let claims = AccessTokenClaims(
            iss: IssuerClaim(value: settings.issuer), sub: SubjectClaim(value: subject(accountId: access.accountId, for: access.client)),
            aud: AudienceClaim(value: [settings.issuer]), exp: ExpirationClaim(value: issuedAt.addingTimeInterval(TimeInterval(access.lifetime.components.seconds))),
            iat: IssuedAtClaim(value: issuedAt), jti: IDClaim(value: SecretToken.generate()), clientId: access.client.id,
            scope: access.scopes.joined(separator: " "), gid: access.grantId, authTime: Int(access.authTime.timeIntervalSince1970),
            acr: "aal\(access.assuranceLevel)"
        )
        var header = JWTHeader()
        header.alg = key.algorithm
        header.typ = Self.accessTokenType
        return try await signers.sign(claims, kid: JWKIdentifier(string: key.keyId), header: header)
    }

    /// An access token's claims when one of the deployment's keys signed it, it is typed `at+jwt`, and its issuer and
    /// audience are this provider; nil otherwise. Its expiry is the caller's to check (against Identity's clock).
    public func verifiedAccessToken(_ token: String) async -> AccessTokenClaims? {
        guard let claims = await verified(token, as: AccessTokenClaims.self, type: Self.accessTokenType, limit: 4_096),
              claims.iss.value == settings.issuer, claims.aud.value == [settings.issuer]
        else { return nil }
        return claims
    }
}

extension OpenIDTokenIssuer {
    /// The longest `id_token_hint` read: an RS256 ID token is about 1 KiB.
    static let maximumHintLength = 8_192

    /// An `id_token_hint`'s subject and client, when one of the deployment's keys signed it as an ID token of this
    /// issuer; nil otherwise. Its expiry does not matter (RP-Initiated Logout 1.0, 2: an expired one is fine).
    public func verifiedIDTokenHint(_ token: String) async -> (subject: String, clientId: String)? {
        guard let claims = await verified(token, as: IDTokenHintClaims.self, type: "JWT", limit: Self.maximumHintLength),
              claims.iss.value == settings.issuer, claims.aud.value == [claims.azp]
        else { return nil }
        return (claims.sub.value, claims.azp)
    }

    /// A token's claims when it is at most `limit` bytes, one of the deployment's keys signed it, and its header's
    /// `typ` is `type` (an access token never passes for an ID token, nor the other way round); nil otherwise.
    func verified<Claims: JWTPayload>(_ token: String, as _: Claims.Type, type: String, limit: Int) async -> Claims? {
        guard token.utf8.count <= limit, let claims = try? await signers.verify(token, as: Claims.self),
              (try? DefaultJWTParser().parse(Array(token.utf8), as: Claims.self).header.typ) == type
        else { return nil }
        return claims
    }
}

/// What an `id_token_hint` is read for; its signature is checked, its expiry deliberately not.
struct IDTokenHintClaims: JWTPayload {
    var iss: IssuerClaim
    var sub: SubjectClaim
    var aud: AudienceClaim
    var azp: String

    func verify(using algorithm: some JWTAlgorithm) throws {}
}

/// An access token's claims (RFC 9068 2.2) and the grant's id.
public struct AccessTokenClaims: JWTPayload {
    var iss: IssuerClaim
    var sub: SubjectClaim
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim
    var jti: IDClaim
    var clientId: String
    var scope: String
    var gid: String
    var authTime: Int
    var acr: String

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, jti, scope, gid, acr
        case clientId = "client_id"
        case authTime = "auth_time"
    }

    /// Expiry is checked by the caller against Identity's clock (tests move it).
    public func verify(using algorithm: some JWTAlgorithm) throws {}
}

/// An ID token's claims (OpenID Connect Core 2): who (`sub`), for whom (`aud`, `azp`), by whom (`iss`), until when,
/// and how the person signed in.
struct IDTokenClaims: JWTPayload {
    var iss: IssuerClaim
    var sub: SubjectClaim
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim
    var authTime: Int
    var nonce: String?
    var acr: String
    var amr: [String]?
    var azp: String

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, nonce, acr, amr, azp
        case authTime = "auth_time"
    }

    func verify(using algorithm: some JWTAlgorithm) throws {
        try exp.verifyNotExpired()
    }
}

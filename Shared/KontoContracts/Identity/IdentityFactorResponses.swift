import KontoModel

/// What a login answers: a session, or (a second factor enrolled) a challenge and no session.
public struct IdentityLoginAnswer: Codable, Sendable, Equatable {
    /// The session: the account has no second factor.
    public var accountSession: IdentityAccountSession?
    /// The second factor is due: complete the login with ``IdentityContract/completeSecondFactor``.
    public var challenge: IdentitySecondFactorChallenge?

    public init(accountSession: IdentityAccountSession? = nil, challenge: IdentitySecondFactorChallenge? = nil) {
        self.accountSession = accountSession
        self.challenge = challenge
    }
}

/// A correct password's answer when a second factor is due: a short-lived, single-use token and the factors that
/// may answer it.
public struct IdentitySecondFactorChallenge: Codable, Sendable, Equatable {
    public var token: BearerToken
    public var expiresAt: Timestamp
    /// The factor types available: `totp`, `passkey`, `recoveryCode`.
    public var factors: [String]
    /// With `passkey` among them: what `navigator.credentials.get` needs (the account's passkeys allowed).
    public var passkey: PasskeyRequestOptions?

    public init(token: BearerToken, expiresAt: Timestamp, factors: [String], passkey: PasskeyRequestOptions? = nil) {
        self.token = token
        self.expiresAt = expiresAt
        self.factors = factors
        self.passkey = passkey
    }
}

/// One second factor of an account.
public struct IdentityFactor: Codable, Sendable, Equatable {
    public var id: String
    /// `totp`, `passkey` or `recoveryCodes` (the set of codes is one factor).
    public var type: String
    public var name: String
    public var createdAt: Timestamp
    public var lastUsedAt: Timestamp?
    /// A TOTP awaiting its first code: not yet asked for at login.
    public var pending: Bool
    /// Recovery codes only: how many are unused.
    public var remaining: Int?

    public init(id: String, type: String, name: String, createdAt: Timestamp, lastUsedAt: Timestamp? = nil, pending: Bool = false, remaining: Int? = nil) {
        self.id = id
        self.type = type
        self.name = name
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.pending = pending
        self.remaining = remaining
    }
}

public struct IdentityFactors: Codable, Sendable, Equatable {
    public var factors: [IdentityFactor]

    public init(factors: [IdentityFactor]) {
        self.factors = factors
    }
}

/// A TOTP enrolment awaiting its first code: the secret (base32) and the `otpauth://` URI an authenticator app
/// scans. Shown once, to the account's owner; tokens never print.
public struct IdentityTOTPEnrolment: Codable, Sendable, Equatable {
    public var factorId: String
    public var secret: BearerToken
    public var otpauthURI: BearerToken

    public init(factorId: String, secret: BearerToken, otpauthURI: BearerToken) {
        self.factorId = factorId
        self.secret = secret
        self.otpauthURI = otpauthURI
    }
}

/// A removed factor: how many second factors are left (0: the password alone signs in again).
public struct IdentityFactorRemoved: Codable, Sendable, Equatable {
    public var remainingFactors: Int

    public init(remainingFactors: Int) {
        self.remainingFactors = remainingFactors
    }
}

/// New recovery codes, replacing every earlier one: shown once.
public struct IdentityRecoveryCodes: Codable, Sendable, Equatable {
    public var codes: [BearerToken]

    public init(codes: [BearerToken]) {
        self.codes = codes
    }
}

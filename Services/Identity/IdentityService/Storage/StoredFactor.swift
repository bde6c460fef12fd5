import KontoModel

/// A second factor as Identity keeps it.
public struct StoredFactor: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// An authenticator app's time-based codes.
        case totp
        /// The account's set of recovery codes (one factor, however many codes).
        case recoveryCodes
        /// A WebAuthn credential: a platform authenticator's or a security key's.
        case passkey
    }

    public var id: String
    public var accountId: String
    public var kind: Kind
    public var name: String
    /// A TOTP's secret, or a passkey's COSE public key, sealed (``FactorSecretBox``: a key written into the table by
    /// someone who can write it but does not hold the deployment's secret does not open); nil for recovery codes.
    public var sealedSecret: [UInt8]?
    /// A passkey's credential ID (not secret: browsers send it in the clear), unique across accounts.
    public var credentialId: [UInt8]?
    /// A passkey's signature counter as last seen.
    public var signCount: Int64?
    /// A TOTP enrolment awaiting its first code is not a factor yet (not asked for at login).
    public var confirmed: Bool
    public var createdAt: Timestamp
    public var lastUsedAt: Timestamp?
    /// A TOTP's last accepted step: a code of it or an earlier step is never accepted again.
    public var lastUsedStep: Int64?
    /// Recovery codes: how many are unused (as read; ignored when stored).
    public var remaining: Int?

    public init(
        id: String,
        accountId: String,
        kind: Kind,
        name: String,
        sealedSecret: [UInt8]? = nil,
        confirmed: Bool,
        createdAt: Timestamp,
        lastUsedAt: Timestamp? = nil,
        lastUsedStep: Int64? = nil,
        remaining: Int? = nil,
        credentialId: [UInt8]? = nil,
        signCount: Int64? = nil
    ) {
        self.id = id
        self.accountId = accountId
        self.kind = kind
        self.name = name
        self.sealedSecret = sealedSecret
        self.confirmed = confirmed
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.lastUsedStep = lastUsedStep
        self.remaining = remaining
        self.credentialId = credentialId
        self.signCount = signCount
    }

    /// Whether a login must be completed with a second factor because of it (recovery codes alone are a way back
    /// in, not a factor that is asked for).
    public var demandsSecondFactor: Bool { confirmed && kind != .recoveryCodes }
}

/// A correct password's challenge: the second factor is due before a session exists.
public struct StoredChallenge: Sendable, Equatable {
    /// SHA-256 of the challenge token.
    public var tokenHash: [UInt8]
    public var accountId: String
    /// The credential version the password was checked under: the session it leads to is created under it.
    public var credentialVersion: Int64
    public var expiresAt: Timestamp

    public init(tokenHash: [UInt8], accountId: String, credentialVersion: Int64, expiresAt: Timestamp) {
        self.tokenHash = tokenHash
        self.accountId = accountId
        self.credentialVersion = credentialVersion
        self.expiresAt = expiresAt
    }
}

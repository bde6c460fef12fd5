import Foundation

/// A correct password's answer for an account with a second factor: no session yet, but a short-lived, single-use
/// challenge to complete with a code.
public struct KontoSecondFactorChallenge: Sendable, Equatable {
    public var token: String
    public var expiresAt: Date
    /// What may answer it: `totp`, `passkey`, `recoveryCode`.
    public var factors: [String]
    /// The userId the password was given for (kept for the session the challenge leads to).
    public var userId: String
    /// With `passkey` among the factors: WebAuthn's request options (PublicKeyCredentialRequestOptionsJSON) for the
    /// platform's passkey API; answer with ``KontoClient/completeLogIn(challenge:passkeyCredentialJSON:)``.
    public var passkeyOptions: Data?

    public init(token: String, expiresAt: Date, factors: [String], userId: String, passkeyOptions: Data? = nil) {
        self.token = token
        self.expiresAt = expiresAt
        self.factors = factors
        self.userId = userId
        self.passkeyOptions = passkeyOptions
    }
}

/// One second factor of the account (`GET /v1/account/factors`).
public struct KontoFactor: Sendable, Equatable {
    public var id: String
    /// `totp`, `passkey` or `recoveryCodes`.
    public var type: String
    public var name: String
    public var createdAt: Date
    public var lastUsedAt: Date?
    /// A TOTP enrolment awaiting its first code.
    public var isPending: Bool
    /// Recovery codes: how many are unused.
    public var remaining: Int?
}

/// A TOTP enrolment: add it to an authenticator app (the URI as a QR code, or the secret typed in), then confirm it
/// with ``KontoClient/confirmTOTP(factorId:code:)``.
public struct KontoTOTPEnrolment: Sendable, Equatable {
    public var factorId: String
    /// The secret in base32.
    public var secret: String
    public var otpauthURI: String
}

import KontoModel

// The requests of the second-factor methods (``IdentityContract``): enrolling, confirming and removing factors,
// recovery codes, and the login's second step.

/// A security-related request with nothing but the session and, optionally, the current password (which an account
/// without second factors may give instead of a privileged window): enrol a TOTP, make recovery codes.
public struct IdentitySecuredRequest: Codable, Sendable {
    public var token: BearerToken
    public var currentPassword: SecretString?

    public init(token: BearerToken, currentPassword: SecretString? = nil) {
        self.token = token
        self.currentPassword = currentPassword
    }
}

/// Confirms a pending TOTP enrolment with a first valid code.
public struct IdentityConfirmFactorRequest: Codable, Sendable {
    public var token: BearerToken
    public var factorId: String
    public var code: SecretString

    public init(token: BearerToken, factorId: String, code: SecretString) {
        self.token = token
        self.factorId = factorId
        self.code = code
    }
}

/// Removes a second factor (security-related).
public struct IdentityRemoveFactorRequest: Codable, Sendable {
    public var token: BearerToken
    public var factorId: String
    public var currentPassword: SecretString?

    public init(token: BearerToken, factorId: String, currentPassword: SecretString? = nil) {
        self.token = token
        self.factorId = factorId
        self.currentPassword = currentPassword
    }
}

/// The login's second step: the challenge a correct password gave, and a TOTP code, a recovery code or a passkey's
/// signature over the challenge's passkey options.
public struct IdentitySecondFactorRequest: Codable, Sendable {
    public var challenge: BearerToken
    public var code: SecretString?
    public var recoveryCode: SecretString?
    public var credential: PasskeyAssertionCredential?
    public var clientAddress: String?
    /// As in ``IdentityLoginRequest/clientDevice``.
    public var clientDevice: String?
    /// What the client calls itself (its User-Agent), shown in the owner's list of sessions; bounded by Identity.
    public var clientName: String?

    public init(
        challenge: BearerToken, code: SecretString? = nil, recoveryCode: SecretString? = nil, credential: PasskeyAssertionCredential? = nil,
        clientAddress: String? = nil, clientDevice: String? = nil, clientName: String? = nil
    ) {
        self.challenge = challenge
        self.code = code
        self.recoveryCode = recoveryCode
        self.credential = credential
        self.clientAddress = clientAddress
        self.clientDevice = clientDevice
        self.clientName = clientName
    }
}

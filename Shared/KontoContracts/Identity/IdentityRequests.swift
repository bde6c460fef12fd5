import KontoModel

// The requests of the Identity contract (``IdentityContract``). Passwords are ``SecretString``s, so only the
// methods declared to carry secrets can send them; tokens are ``BearerToken``s, which never print.

/// Sign up with credentials and details; from an anonymous session, the anonymous account is upgraded and keeps
/// its accountId.
public struct IdentitySignUpRequest: Codable, Sendable {
    public var userId: String
    public var password: SecretString
    /// Every other configured key; Identity stores them through Profile.
    public var details: AccountDetails
    /// The caller's address, for throttling (the Gateway passes the client's).
    public var clientAddress: String?
    public var anonymousSession: BearerToken?
    /// What the client calls itself (its User-Agent), shown in the owner's list of sessions; bounded by Identity.
    public var clientName: String?

    public init(
        userId: String, password: SecretString, details: AccountDetails = AccountDetails(), clientAddress: String? = nil, anonymousSession: BearerToken? = nil,
        clientName: String? = nil
    ) {
        self.userId = userId
        self.password = password
        self.details = details
        self.clientAddress = clientAddress
        self.anonymousSession = anonymousSession
        self.clientName = clientName
    }
}

public struct IdentityLoginRequest: Codable, Sendable {
    public var userId: String
    public var password: SecretString
    public var clientAddress: String?
    /// The browser's device marker (the web console's cookie), if it has one: a client that signed in to this
    /// account before is not held by failures from elsewhere. Optional, so an older gateway's request decodes.
    public var clientDevice: String?
    /// What the client calls itself (its User-Agent), shown in the owner's list of sessions; bounded by Identity.
    public var clientName: String?

    public init(userId: String, password: SecretString, clientAddress: String? = nil, clientDevice: String? = nil, clientName: String? = nil) {
        self.userId = userId
        self.password = password
        self.clientAddress = clientAddress
        self.clientDevice = clientDevice
        self.clientName = clientName
    }
}

/// A request made with nothing but a client address (anonymous sign-in).
public struct IdentityClientRequest: Codable, Sendable, Equatable {
    public var clientAddress: String?
    /// What the client calls itself (its User-Agent), shown in the owner's list of sessions; bounded by Identity.
    public var clientName: String?

    public init(clientAddress: String? = nil, clientName: String? = nil) {
        self.clientAddress = clientAddress
        self.clientName = clientName
    }
}

/// A request made with a session alone: validate, log out, log out everywhere.
public struct IdentitySessionRequest: Codable, Sendable, Equatable {
    public var token: BearerToken

    public init(token: BearerToken) {
        self.token = token
    }
}

/// A session and a password, a second factor's code, or both: reauthenticate (opens the privileged window; with a
/// second factor, an `aal2` one that security-related operations of an account with second factors need).
public struct IdentityReauthenticateRequest: Codable, Sendable {
    public var token: BearerToken
    public var password: SecretString?
    /// A TOTP code (6 digits).
    public var code: SecretString?
    /// One of the account's recovery codes (used up).
    public var recoveryCode: SecretString?
    /// One of the account's passkeys, signing options from ``IdentityContract/passkeyLoginOptions``.
    public var credential: PasskeyAssertionCredential?

    public init(
        token: BearerToken, password: SecretString? = nil, code: SecretString? = nil, recoveryCode: SecretString? = nil,
        credential: PasskeyAssertionCredential? = nil
    ) {
        self.token = token
        self.password = password
        self.code = code
        self.recoveryCode = recoveryCode
        self.credential = credential
    }
}

/// Security-related: needs the privileged window, or the current password here.
public struct IdentityChangePasswordRequest: Codable, Sendable {
    public var token: BearerToken
    public var currentPassword: SecretString?
    public var newPassword: SecretString

    public init(token: BearerToken, currentPassword: SecretString? = nil, newPassword: SecretString) {
        self.token = token
        self.currentPassword = currentPassword
        self.newPassword = newPassword
    }
}

/// Security-related: needs the privileged window, or the current password here.
public struct IdentityChangeUserIdRequest: Codable, Sendable {
    public var token: BearerToken
    public var userId: String
    public var currentPassword: SecretString?

    public init(token: BearerToken, userId: String, currentPassword: SecretString? = nil) {
        self.token = token
        self.userId = userId
        self.currentPassword = currentPassword
    }
}

/// Security-related: needs the privileged window, or the current password here.
public struct IdentityDeleteRequest: Codable, Sendable {
    public var token: BearerToken
    public var currentPassword: SecretString?

    public init(token: BearerToken, currentPassword: SecretString? = nil) {
        self.token = token
        self.currentPassword = currentPassword
    }
}

/// Answered the same whether or not the account exists.
public struct IdentityPasswordResetRequest: Codable, Sendable, Equatable {
    public var userId: String
    public var clientAddress: String?
    /// As in ``IdentityLoginRequest/clientDevice``: a known client has a reset-mail allowance of its own.
    public var clientDevice: String?

    public init(userId: String, clientAddress: String? = nil, clientDevice: String? = nil) {
        self.userId = userId
        self.clientAddress = clientAddress
        self.clientDevice = clientDevice
    }
}

/// Asks for a sign-in code by mail; answered the same whether or not the account exists.
public struct IdentityEmailCodeRequest: Codable, Sendable, Equatable {
    public var userId: String
    public var clientAddress: String?
    /// As in ``IdentityLoginRequest/clientDevice``: a known client has a code-mail allowance of its own.
    public var clientDevice: String?

    public init(userId: String, clientAddress: String? = nil, clientDevice: String? = nil) {
        self.userId = userId
        self.clientAddress = clientAddress
        self.clientDevice = clientDevice
    }
}

/// Signs in with the code mailed to the userId: the first factor, as a password is.
public struct IdentityEmailCodeLoginRequest: Codable, Sendable {
    public var userId: String
    /// The mailed code: 8 digits.
    public var code: SecretString
    public var clientAddress: String?
    /// As in ``IdentityLoginRequest/clientDevice``.
    public var clientDevice: String?
    /// What the client calls itself (its User-Agent), shown in the owner's list of sessions; bounded by Identity.
    public var clientName: String?

    public init(userId: String, code: SecretString, clientAddress: String? = nil, clientDevice: String? = nil, clientName: String? = nil) {
        self.userId = userId
        self.code = code
        self.clientAddress = clientAddress
        self.clientDevice = clientDevice
        self.clientName = clientName
    }
}

/// The token of a verification link.
public struct IdentityConfirmEmailVerificationRequest: Codable, Sendable {
    public var token: BearerToken
    /// The confirmer's session (the console's, the app's): then the token must be this session's account's, and the
    /// proof ends nothing (whoever holds a way into the account and its mailbox is the owner). A session that is not
    /// valid is refused and the token stays. Without one, the account's first proof ends everything it had before.
    public var session: BearerToken?

    public init(token: BearerToken, session: BearerToken? = nil) {
        self.token = token
        self.session = session
    }
}

/// The code of a verification mail, typed into the app that holds the account's session: the same proof as the link
/// with that session (nothing is ended).
public struct IdentityConfirmEmailVerificationCodeRequest: Codable, Sendable {
    /// The account's session.
    public var token: BearerToken
    /// The mailed code: 8 digits.
    public var code: SecretString

    public init(token: BearerToken, code: SecretString) {
        self.token = token
        self.code = code
    }
}

public struct IdentityConfirmPasswordResetRequest: Codable, Sendable {
    public var token: BearerToken
    public var newPassword: SecretString

    public init(token: BearerToken, newPassword: SecretString) {
        self.token = token
        self.newPassword = newPassword
    }
}

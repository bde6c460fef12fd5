import KontoModel
import KontoWire

/// The Identity service's contract: credentials and sessions (SpeziAccount's UserIdPasswordAccountService).
///
/// Methods that take a password are declared as carrying secrets: only they can send a ``SecretString``.
/// Login for an unknown user and for a wrong password answer byte for byte the same (`account.wrongCredentials`),
/// and a password reset request is answered the same whether or not the account exists.
public enum IdentityContract {
    public static let serviceName = "identity"
    /// Raised when a method's request or response changes incompatibly.
    public static let version = 1

    public static let signUp = WireMethod<IdentitySignUpRequest, IdentityAccountSession>.carryingSecrets("identity.signUp")
    public static let signInAnonymously = WireMethod<IdentityClientRequest, IdentityAccountSession>("identity.signInAnonymously")
    public static let login = WireMethod<IdentityLoginRequest, IdentityAccountSession>.carryingSecrets("identity.login")
    public static let validateSession = WireMethod<IdentitySessionRequest, IdentitySessionInfo>("identity.validateSession")
    public static let logout = WireMethod<IdentitySessionRequest, IdentitySessionsEnded>("identity.logout")
    public static let logoutEverywhere = WireMethod<IdentitySessionRequest, IdentitySessionsEnded>("identity.logoutEverywhere")
    public static let reauthenticate = WireMethod<IdentityReauthenticateRequest, IdentityPrivilege>.carryingSecrets("identity.reauthenticate")
    public static let changePassword = WireMethod<IdentityChangePasswordRequest, IdentitySessionsEnded>.carryingSecrets("identity.changePassword")
    public static let changeUserId = WireMethod<IdentityChangeUserIdRequest, IdentityDone>.carryingSecrets("identity.changeUserId")
    public static let requestPasswordReset = WireMethod<IdentityPasswordResetRequest, IdentityDone>("identity.requestPasswordReset")
    public static let confirmPasswordReset = WireMethod<IdentityConfirmPasswordResetRequest, IdentitySessionsEnded>.carryingSecrets("identity.confirmPasswordReset")
    public static let delete = WireMethod<IdentityDeleteRequest, IdentityDone>.carryingSecrets("identity.delete")

    public static let methods = [
        signUp.name, signInAnonymously.name, login.name, validateSession.name, logout.name, logoutEverywhere.name,
        reauthenticate.name, changePassword.name, changeUserId.name, requestPasswordReset.name,
        confirmPasswordReset.name, delete.name, HealthContract.check.name,
    ]

    /// Every code an Identity method may answer with (besides the wire layer's).
    public static let errorCodes: [String] = [
        AccountError.Code.credentialsTaken.rawValue,
        AccountError.Code.alreadySignedUp.rawValue,
        AccountError.Code.wrongCredentials.rawValue,
        AccountError.Code.validationFailed.rawValue,
        AccountError.Code.missingAccountValue.rawValue,
        AccountError.Code.unauthenticated.rawValue,
        AccountError.Code.reauthenticationRequired.rawValue,
        AccountError.Code.invalidResetToken.rawValue,
        AccountError.Code.throttled.rawValue,
        AccountError.Code.notFound.rawValue,
    ] + ErrorCatalog.identity.map(\.code)

    /// Identity's own codes.
    public enum ErrorCode {
        /// Every password-hashing thread is busy and the queue is full (a login flood); retryable.
        public static let busy = "identity.busy"
        /// Identity's database cannot be reached right now; retryable.
        public static let storageUnavailable = "identity.storageUnavailable"
        /// Identity's database failed unexpectedly.
        public static let storageFailure = "identity.storageFailure"
        /// The Profile service could not be reached or answered late; nothing was half-made, retryable.
        public static let profileUnavailable = "identity.profileUnavailable"
    }
}

import KontoModel
import KontoWire

/// The Identity service's contract: credentials and sessions (SpeziAccount's UserIdPasswordAccountService).
///
/// Methods that take a password are declared as carrying secrets: only they can send a ``SecretString``.
/// Login for an unknown user and for a wrong password answer byte for byte the same (`account.wrongCredentials`),
/// and a password reset request is answered the same whether or not the account exists.
public enum IdentityContract {
    public static let serviceName = "identity"
    /// Where the service listens unless configured otherwise, and where its callers look for it.
    public static let defaultPort = 7401
    /// Raised when a method's request or response changes incompatibly.
    /// 2: login answers ``IdentityLoginAnswer`` (a session, or a second-factor challenge).
    public static let version = 2

    public static let signUp = WireMethod<IdentitySignUpRequest, IdentityAccountSession>.carryingSecrets("identity.signUp")
    public static let signInAnonymously = WireMethod<IdentityClientRequest, IdentityAccountSession>("identity.signInAnonymously")
    public static let login = WireMethod<IdentityLoginRequest, IdentityLoginAnswer>.carryingSecrets("identity.login")
    public static let completeSecondFactor = WireMethod<IdentitySecondFactorRequest, IdentityAccountSession>.carryingSecrets("identity.completeSecondFactor")
    public static let listFactors = WireMethod<IdentitySessionRequest, IdentityFactors>("identity.listFactors")
    public static let enrollTOTP = WireMethod<IdentitySecuredRequest, IdentityTOTPEnrolment>.carryingSecrets("identity.enrollTOTP")
    public static let confirmTOTP = WireMethod<IdentityConfirmFactorRequest, IdentityFactor>.carryingSecrets("identity.confirmTOTP")
    public static let removeFactor = WireMethod<IdentityRemoveFactorRequest, IdentityFactorRemoved>.carryingSecrets("identity.removeFactor")
    public static let regenerateRecoveryCodes = WireMethod<IdentitySecuredRequest, IdentityRecoveryCodes>.carryingSecrets("identity.regenerateRecoveryCodes")
    public static let passkeyRegistrationOptions = WireMethod<IdentitySecuredRequest, PasskeyCreationOptions>.carryingSecrets("identity.passkeyRegistrationOptions")
    public static let registerPasskey = WireMethod<IdentityRegisterPasskeyRequest, IdentityFactor>("identity.registerPasskey")
    public static let passkeyLoginOptions = WireMethod<IdentityPasskeyOptionsRequest, PasskeyRequestOptions>("identity.passkeyLoginOptions")
    public static let passkeyLogin = WireMethod<IdentityPasskeyLoginRequest, IdentityAccountSession>("identity.passkeyLogin")
    public static let validateSession = WireMethod<IdentitySessionRequest, IdentitySessionInfo>("identity.validateSession")
    public static let logout = WireMethod<IdentitySessionRequest, IdentitySessionsEnded>("identity.logout")
    public static let logoutEverywhere = WireMethod<IdentitySessionRequest, IdentitySessionsEnded>("identity.logoutEverywhere")
    /// The caller's account's live sessions, the caller's marked `current` (never a token).
    public static let listSessions = WireMethod<IdentitySessionRequest, IdentityAccountSessions>("identity.listSessions")
    /// Ends one session of the caller's account: the caller's own as a logout, another as a security-related change.
    public static let endSession = WireMethod<IdentityEndSessionRequest, IdentitySessionsEnded>.carryingSecrets("identity.endSession")
    /// Ends every session of the caller's account but the caller's (security-related).
    public static let endOtherSessions = WireMethod<IdentitySecuredRequest, IdentitySessionsEnded>.carryingSecrets("identity.endOtherSessions")
    /// The mail the owner may turn off, as they set it.
    public static let mailPreferences = WireMethod<IdentitySessionRequest, IdentityMailPreferences>("identity.mailPreferences")
    /// Changes it: turning a notice off is security-related.
    public static let setMailPreferences = WireMethod<IdentitySetMailPreferencesRequest, IdentityMailPreferences>.carryingSecrets("identity.setMailPreferences")
    /// Konto's published signing keys as an OpenID Provider (the JWK Set at `/oauth2/jwks`) and its issuer; no keys
    /// and no issuer where it is none.
    public static let openIDKeys = WireMethod<IdentityOpenIDKeysRequest, IdentityOpenIDKeys>("identity.openIDKeys")
    /// The authorization endpoint's decision for the console: a redirect (a code, or an error for the client), sign in
    /// first, the consent page, or a refusal shown to the person. Issues codes (docs/OIDC.md).
    public static let openIDAuthorize = WireMethod<IdentityOpenIDAuthorizeRequest, IdentityOpenIDAuthorization>.carryingSecrets("identity.openIDAuthorize")
    /// RP-initiated logout for the console: end the session (and the grants made through it) when the request proves
    /// it comes from the application the session signed in to, ask the person otherwise, or refuse (docs/OIDC.md).
    public static let openIDLogout = WireMethod<IdentityOpenIDLogoutRequest, IdentityOpenIDLogout>.carryingSecrets("identity.openIDLogout")
    /// The token endpoint: a code with its PKCE verifier, or a refresh token, for tokens; OAuth's errors in the answer.
    public static let openIDToken = WireMethod<IdentityOpenIDTokenRequest, IdentityOpenIDTokenResponse>.carryingSecrets("identity.openIDToken")
    /// What an access token grants (the userinfo endpoint's and Konto's API's check); `invalid_token` in the answer.
    public static let openIDAccessToken = WireMethod<IdentityOpenIDAccessTokenRequest, IdentityOpenIDAccessGrant>.carryingSecrets("identity.openIDAccessToken")
    /// RFC 7662 introspection of a confidential client's own token.
    public static let openIDIntrospect = WireMethod<IdentityOpenIDTokenQuery, IdentityOpenIDIntrospection>.carryingSecrets("identity.openIDIntrospect")
    /// RFC 7009 revocation of a client's own token, and with it its grant.
    public static let openIDRevoke = WireMethod<IdentityOpenIDTokenQuery, IdentityOpenIDRevocation>.carryingSecrets("identity.openIDRevoke")
    /// The applications with access to the caller's account (consents and live grants).
    public static let openIDApplications = WireMethod<IdentitySessionRequest, IdentityOpenIDApplications>("identity.openIDApplications")
    /// The owner revokes an application: its consent and every grant end (audited `oidc.application_revoked`).
    public static let revokeOpenIDApplication = WireMethod<IdentityRevokeApplicationRequest, IdentityApplicationRevoked>("identity.revokeOpenIDApplication")
    /// Everything Identity holds about the caller's account, for its owner's copy of their data (security-related;
    /// audited `account.exported`): metadata, sessions, factors, identities, verification, mail preferences, the
    /// audit entries still kept. Never a secret or a digest.
    public static let exportAccount = WireMethod<IdentitySecuredRequest, IdentityAccountExport>.carryingSecrets("identity.exportAccount")
    public static let reauthenticate = WireMethod<IdentityReauthenticateRequest, IdentityPrivilege>.carryingSecrets("identity.reauthenticate")
    public static let changePassword = WireMethod<IdentityChangePasswordRequest, IdentitySessionsEnded>.carryingSecrets("identity.changePassword")
    public static let changeUserId = WireMethod<IdentityChangeUserIdRequest, IdentityDone>.carryingSecrets("identity.changeUserId")
    public static let requestPasswordReset = WireMethod<IdentityPasswordResetRequest, IdentityDone>("identity.requestPasswordReset")
    public static let confirmPasswordReset = WireMethod<IdentityConfirmPasswordResetRequest, IdentitySessionsEnded>.carryingSecrets("identity.confirmPasswordReset")
    public static let delete = WireMethod<IdentityDeleteRequest, IdentityDone>.carryingSecrets("identity.delete")
    /// Sends the session's account a new link confirming its address (limited per account and address).
    public static let requestEmailVerification = WireMethod<IdentitySessionRequest, IdentityDone>("identity.requestEmailVerification")
    /// Confirms an address with the token of the link sent to it; no session needed (the link may open anywhere).
    public static let confirmEmailVerification = WireMethod<IdentityConfirmEmailVerificationRequest, IdentityEmailVerified>("identity.confirmEmailVerification")
    /// Confirms the session's account's address with the code of the mail sent to it (the app's way: nothing is lost).
    public static let confirmEmailVerificationCode = WireMethod<IdentityConfirmEmailVerificationCodeRequest, IdentityEmailVerified>.carryingSecrets(
        "identity.confirmEmailVerificationCode"
    )
    /// Mails a sign-in code to the userId (where the deployment offers it); the same answer whether or not the account
    /// exists.
    public static let requestEmailCode = WireMethod<IdentityEmailCodeRequest, IdentityDone>("identity.requestEmailCode")
    /// Signs in with a mailed code: a session, or a second-factor challenge as after a password.
    public static let emailCodeLogin = WireMethod<IdentityEmailCodeLoginRequest, IdentityLoginAnswer>.carryingSecrets("identity.emailCodeLogin")
    /// Signs in with an external identity provider: a session, a second-factor challenge, or a sign-up to complete.
    public static let externalLogin = WireMethod<IdentityExternalLoginRequest, IdentityExternalLoginAnswer>.carryingSecrets("identity.externalLogin")
    /// The configured providers (names and display names).
    public static let identityProviders = WireMethod<IdentityClientRequest, IdentityProviderList>("identity.identityProviders")
    /// A provider's authorization URL for the web flow.
    public static let externalAuthorization = WireMethod<IdentityAuthorizationRequest, IdentityAuthorizationURL>("identity.externalAuthorization")
    /// Links an external identity to the signed-in account (security-related).
    public static let linkIdentity = WireMethod<IdentityLinkIdentityRequest, IdentityExternalIdentity>.carryingSecrets("identity.linkIdentity")
    /// The signed-in account's linked identities.
    public static let listIdentities = WireMethod<IdentitySessionRequest, IdentityExternalIdentities>("identity.listIdentities")
    /// Unlinks one (security-related; never the account's last way to sign in).
    public static let unlinkIdentity = WireMethod<IdentityUnlinkIdentityRequest, IdentityDone>.carryingSecrets("identity.unlinkIdentity")

    // Operators (docs/ADMIN.md): each carries the operator key as presented, checked by Identity on every call.
    /// Whether a key is valid and holds a scope (for actions other services carry out; the admin console's sign-in).
    public static let operatorAuthorize = WireMethod<IdentityOperatorAuthorizeRequest, IdentityOperator>.carryingSecrets("identity.operatorAuthorize")
    /// Makes a key (shown once) with scopes among the caller's own.
    public static let createOperatorKey = WireMethod<IdentityCreateOperatorKeyRequest, IdentityOperatorKeyCreated>.carryingSecrets("identity.createOperatorKey")
    public static let listOperatorKeys = WireMethod<IdentityOperatorKeysRequest, IdentityOperatorKeys>.carryingSecrets("identity.listOperatorKeys")
    public static let revokeOperatorKey = WireMethod<IdentityOperatorKeyRequest, IdentityDone>.carryingSecrets("identity.revokeOperatorKey")
    /// Accounts by userId (prefix, substring), verification, anonymity, creation, second factor, provider; in pages.
    public static let searchAccounts = WireMethod<IdentityAccountSearchRequest, IdentityAccountSearchPage>.carryingSecrets("identity.searchAccounts")
    /// One account's credential metadata (never a secret, hash or token).
    public static let accountRecord = WireMethod<IdentityOperatorAccountRequest, IdentityAccountRecord>.carryingSecrets("identity.accountRecord")
    /// Makes an account (a password, an imported hash or neither; verified or not; no session), as sign-up opens one.
    public static let createAccount = WireMethod<IdentityCreateAccountRequest, IdentityManagedAccount>.carryingSecrets("identity.createAccount")
    /// Disables an account: every session ends, no sign-in succeeds until it is enabled (`eventIds` for the caches).
    public static let disableAccount = WireMethod<IdentityOperatorAccountRequest, IdentityDone>.carryingSecrets("identity.disableAccount")
    public static let enableAccount = WireMethod<IdentityOperatorAccountRequest, IdentityDone>.carryingSecrets("identity.enableAccount")
    /// Deletes an account by the owner's deletion path (its data erased, `deletingAccount`; `eventIds` for the caches).
    public static let deleteAccount = WireMethod<IdentityOperatorAccountRequest, IdentityDone>.carryingSecrets("identity.deleteAccount")
    /// Mails the account's owner a password reset, as the owner's own request would (within the same hourly allowance).
    public static let sendPasswordReset = WireMethod<IdentityOperatorAccountRequest, IdentityDone>.carryingSecrets("identity.sendPasswordReset")
    /// Removes one of an account's second factors (its owner is mailed, as when they remove one themselves).
    public static let removeAccountFactor = WireMethod<IdentityAccountFactorRequest, IdentityFactorRemoved>.carryingSecrets("identity.removeAccountFactor")
    /// Changes an account's details (server-owned keys too), userId and verification, for an operator.
    public static let updateAccount = WireMethod<IdentityUpdateAccountRequest, IdentityManagedAccount>.carryingSecrets("identity.updateAccount")
    /// Unlinks one of an account's provider identities, never its last way in (the owner's own unlinking).
    public static let unlinkAccountIdentity = WireMethod<IdentityAccountIdentityRequest, IdentityDone>.carryingSecrets("identity.unlinkAccountIdentity")
    /// An account's live sessions (never a token).
    public static let accountSessions = WireMethod<IdentityOperatorAccountRequest, IdentityAccountSessions>.carryingSecrets("identity.accountSessions")
    /// Ends one of an account's sessions, or all (`eventIds` for the caches).
    public static let endAccountSessions = WireMethod<IdentityEndAccountSessionsRequest, IdentitySessionsEnded>.carryingSecrets("identity.endAccountSessions")
    /// The audit log, filtered, newest first, in pages (everything listed is sealed into the chain first).
    public static let auditEntries = WireMethod<IdentityAuditQueryRequest, IdentityAuditPage>.carryingSecrets("identity.auditEntries")
    /// Checks the audit log's hash chain from its anchor to its head.
    public static let verifyAudit = WireMethod<IdentityAuditVerifyRequest, IdentityAuditVerification>.carryingSecrets("identity.verifyAudit")
    /// The OpenID Provider's clients: the clients file's, then those registered through the admin API (never a secret).
    public static let openIDClients = WireMethod<IdentityOpenIDClientsRequest, IdentityOpenIDClientList>.carryingSecrets("identity.openIDClients")
    /// Registers a client; a secret client's secret is made and shown once.
    public static let createOpenIDClient = WireMethod<IdentityOpenIDClientRequest, IdentityOpenIDClientSaved>.carryingSecrets("identity.createOpenIDClient")
    /// Replaces an API client's settings (not its type or secret).
    public static let updateOpenIDClient = WireMethod<IdentityOpenIDClientRequest, IdentityOpenIDClientInfo>.carryingSecrets("identity.updateOpenIDClient")
    /// Makes an API client a new secret, the previous one accepted for a while if asked.
    public static let rotateOpenIDClientSecret = WireMethod<IdentityRotateOpenIDClientSecretRequest, IdentityOpenIDClientSaved>.carryingSecrets("identity.rotateOpenIDClientSecret")
    /// Removes an API client with its codes, grants (and their tokens) and consents.
    public static let removeOpenIDClient = WireMethod<IdentityOpenIDClientIdRequest, IdentityOpenIDClientRemoved>.carryingSecrets("identity.removeOpenIDClient")

    public static let methods = [
        signUp.name, signInAnonymously.name, login.name, validateSession.name, logout.name, logoutEverywhere.name,
        listSessions.name, endSession.name, endOtherSessions.name, mailPreferences.name, setMailPreferences.name, exportAccount.name, openIDKeys.name,
        openIDAuthorize.name, openIDLogout.name, openIDToken.name, openIDAccessToken.name, openIDIntrospect.name, openIDRevoke.name,
        openIDApplications.name, revokeOpenIDApplication.name,
        reauthenticate.name, changePassword.name, changeUserId.name, requestPasswordReset.name,
        confirmPasswordReset.name, delete.name, completeSecondFactor.name, listFactors.name, enrollTOTP.name,
        confirmTOTP.name, removeFactor.name, regenerateRecoveryCodes.name, passkeyRegistrationOptions.name, registerPasskey.name,
        passkeyLoginOptions.name, passkeyLogin.name, requestEmailVerification.name, confirmEmailVerification.name, confirmEmailVerificationCode.name,
        requestEmailCode.name, emailCodeLogin.name, externalLogin.name, identityProviders.name, externalAuthorization.name,
        linkIdentity.name, listIdentities.name, unlinkIdentity.name, operatorAuthorize.name, createOperatorKey.name, listOperatorKeys.name,
        revokeOperatorKey.name, searchAccounts.name, accountRecord.name, disableAccount.name, enableAccount.name, accountSessions.name,
        endAccountSessions.name, auditEntries.name, verifyAudit.name, deleteAccount.name,
        sendPasswordReset.name, removeAccountFactor.name, createAccount.name, updateAccount.name, unlinkAccountIdentity.name,
        openIDClients.name, createOpenIDClient.name, updateOpenIDClient.name, rotateOpenIDClientSecret.name, removeOpenIDClient.name,
        HealthContract.check.name,
    ]

    /// Every code an Identity method may answer with (besides the wire layer's).
    public static let errorCodes: [KontoErrorCode] = [
        .credentialsTaken,
        .alreadySignedUp,
        .wrongCredentials,
        .wrongSecondFactor,
        .validationFailed,
        .missingAccountValue,
        .unauthenticated,
        .reauthenticationRequired,
        .invalidResetToken,
        .invalidVerificationToken,
        .secondFactorRequired,
        .invalidChallenge,
        .factorLocked,
        .factorNotFound,
        .sessionNotFound,
        .invalidIdentityToken,
        .identityNotFound,
        .lastSignInMethod,
        .applicationNotFound,
        .throttled,
        .notFound,
        .versionConflict,
    ] + KontoErrorCode.codes(of: .identity) + KontoErrorCode.codes(of: .admin)

    /// The codes each method answers with (besides the wire layer's), as its implementation raises them; the union
    /// is ``errorCodes``. Each pair has a recorded example in `Tests/Contracts/identity`, or an entry in
    /// ``exemptions``. The storage codes come from Identity's database, `identity.busy` from a full hashing pool
    /// (only methods that hash a password), `identity.profileUnavailable` from Profile (only the methods that wait for
    /// it: deletion schedules Profile's part and succeeds without it).
    public static let errorCodesByMethod: [String: [KontoErrorCode]] = {
        let storage: [KontoErrorCode] = [.identityStorageUnavailable, .identityStorageFailure]
        return [
            signUp.name: [.validationFailed, .missingAccountValue, .unauthenticated, .alreadySignedUp, .credentialsTaken, .notFound, .identityBusy, .identityProfileUnavailable] + storage,
            signInAnonymously.name: storage,
            login.name: [.validationFailed, .throttled, .wrongCredentials, .notFound, .identityBusy, .identityProfileUnavailable] + storage,
            validateSession.name: [.unauthenticated] + storage,
            logout.name: [.unauthenticated] + storage,
            logoutEverywhere.name: [.unauthenticated] + storage,
            listSessions.name: [.unauthenticated] + storage,
            endSession.name: [.unauthenticated, .sessionNotFound, .validationFailed, .reauthenticationRequired, .secondFactorRequired, .throttled, .wrongCredentials, .identityBusy] + storage,
            endOtherSessions.name: [.unauthenticated, .validationFailed, .reauthenticationRequired, .secondFactorRequired, .throttled, .wrongCredentials, .identityBusy] + storage,
            mailPreferences.name: [.unauthenticated] + storage,
            setMailPreferences.name: [.unauthenticated, .validationFailed, .reauthenticationRequired, .secondFactorRequired, .throttled, .wrongCredentials, .identityBusy] + storage,
            // Read from the configuration: nothing can fail.
            openIDKeys.name: [],
            // OAuth's own refusals are answers (``IdentityOpenIDError``), not the wire's errors.
            openIDAuthorize.name: storage,
            openIDLogout.name: storage,
            openIDToken.name: storage,
            openIDAccessToken.name: storage,
            openIDIntrospect.name: storage,
            openIDRevoke.name: storage,
            openIDApplications.name: [.unauthenticated] + storage,
            revokeOpenIDApplication.name: [.unauthenticated, .applicationNotFound] + storage,
            exportAccount.name: [.unauthenticated, .validationFailed, .reauthenticationRequired, .secondFactorRequired, .throttled, .wrongCredentials, .identityBusy] + storage,
            reauthenticate.name: [.unauthenticated, .validationFailed, .throttled, .factorLocked, .wrongCredentials, .wrongSecondFactor, .notFound, .identityBusy] + storage,
            completeSecondFactor.name: [.validationFailed, .invalidChallenge, .throttled, .factorLocked, .wrongSecondFactor, .identityProfileUnavailable] + storage,
            listFactors.name: [.unauthenticated] + storage,
            enrollTOTP.name: [.unauthenticated, .validationFailed, .reauthenticationRequired, .secondFactorRequired, .throttled, .wrongCredentials, .notFound, .identityBusy] + storage,
            confirmTOTP.name: [.unauthenticated, .factorNotFound, .throttled, .wrongSecondFactor] + storage,
            removeFactor.name: [.unauthenticated, .validationFailed, .reauthenticationRequired, .secondFactorRequired, .throttled, .wrongCredentials, .factorNotFound, .identityBusy] + storage,
            regenerateRecoveryCodes.name: [.unauthenticated, .validationFailed, .reauthenticationRequired, .secondFactorRequired, .throttled, .wrongCredentials, .notFound, .identityBusy] + storage,
            passkeyRegistrationOptions.name: [.unauthenticated, .validationFailed, .reauthenticationRequired, .secondFactorRequired, .throttled, .wrongCredentials, .notFound, .identityBusy] + storage,
            registerPasskey.name: [.unauthenticated, .validationFailed, .notFound] + storage,
            passkeyLoginOptions.name: [],
            passkeyLogin.name: [.wrongCredentials, .identityProfileUnavailable] + storage,
            changePassword.name: [.unauthenticated, .validationFailed, .missingAccountValue, .reauthenticationRequired, .secondFactorRequired, .throttled, .wrongCredentials, .notFound, .identityBusy] + storage,
            changeUserId.name: [.unauthenticated, .validationFailed, .missingAccountValue, .reauthenticationRequired, .secondFactorRequired, .throttled, .wrongCredentials, .credentialsTaken, .notFound, .identityBusy] + storage,
            requestPasswordReset.name: [.validationFailed, .missingAccountValue, .throttled, .notFound] + storage,
            confirmPasswordReset.name: [.validationFailed, .missingAccountValue, .invalidResetToken, .identityBusy] + storage,
            requestEmailVerification.name: [.unauthenticated, .notFound, .throttled, .identityProfileUnavailable] + storage,
            confirmEmailVerification.name: [.unauthenticated, .invalidVerificationToken] + storage,
            confirmEmailVerificationCode.name: [.unauthenticated, .validationFailed, .throttled, .invalidVerificationToken] + storage,
            requestEmailCode.name: [.validationFailed, .missingAccountValue, .throttled, .notFound] + storage,
            emailCodeLogin.name: [.validationFailed, .throttled, .wrongCredentials, .notFound, .identityProfileUnavailable] + storage,
            externalLogin.name: [.validationFailed, .missingAccountValue, .invalidIdentityToken, .unauthenticated, .alreadySignedUp, .credentialsTaken, .wrongCredentials, .notFound, .identityProfileUnavailable, .identityProviderUnavailable] + storage,
            identityProviders.name: [],
            externalAuthorization.name: [.validationFailed, .notFound, .identityProviderUnavailable],
            linkIdentity.name: [.unauthenticated, .validationFailed, .reauthenticationRequired, .secondFactorRequired, .throttled, .wrongCredentials, .notFound, .identityBusy, .invalidIdentityToken, .credentialsTaken, .identityProviderUnavailable] + storage,
            listIdentities.name: [.unauthenticated] + storage,
            unlinkIdentity.name: [.unauthenticated, .validationFailed, .reauthenticationRequired, .secondFactorRequired, .throttled, .wrongCredentials, .identityBusy, .identityNotFound, .lastSignInMethod] + storage,
            delete.name: [.unauthenticated, .validationFailed, .reauthenticationRequired, .secondFactorRequired, .throttled, .wrongCredentials, .notFound, .identityBusy] + storage,
            operatorAuthorize.name: [.adminKeyRefused, .adminScopeMissing, .throttled] + storage,
            createOperatorKey.name: [.adminKeyRefused, .adminScopeMissing, .throttled, .adminInvalidRequest] + storage,
            listOperatorKeys.name: [.adminKeyRefused, .adminScopeMissing, .throttled] + storage,
            revokeOperatorKey.name: [.adminKeyRefused, .adminScopeMissing, .throttled, .adminKeyNotFound, .adminLastKeyManager] + storage,
            searchAccounts.name: [.adminKeyRefused, .adminScopeMissing, .throttled, .adminInvalidRequest] + storage,
            accountRecord.name: [.adminKeyRefused, .adminScopeMissing, .throttled, .notFound] + storage,
            createAccount.name: [
                .adminKeyRefused, .adminScopeMissing, .throttled, .adminInvalidRequest, .validationFailed, .missingAccountValue, .credentialsTaken, .identityBusy,
                .identityProfileUnavailable,
            ] + storage,
            disableAccount.name: [.adminKeyRefused, .adminScopeMissing, .throttled, .notFound] + storage,
            enableAccount.name: [.adminKeyRefused, .adminScopeMissing, .throttled, .notFound] + storage,
            deleteAccount.name: [.adminKeyRefused, .adminScopeMissing, .throttled, .notFound] + storage,
            sendPasswordReset.name: [.adminKeyRefused, .adminScopeMissing, .throttled, .notFound, .adminInvalidRequest] + storage,
            removeAccountFactor.name: [.adminKeyRefused, .adminScopeMissing, .throttled, .factorNotFound] + storage,
            updateAccount.name: [
                .adminKeyRefused, .adminScopeMissing, .throttled, .adminInvalidRequest, .notFound, .validationFailed, .versionConflict, .credentialsTaken,
                .identityProfileUnavailable,
            ] + storage,
            unlinkAccountIdentity.name: [.adminKeyRefused, .adminScopeMissing, .throttled, .identityNotFound, .lastSignInMethod] + storage,
            accountSessions.name: [.adminKeyRefused, .adminScopeMissing, .throttled, .notFound] + storage,
            endAccountSessions.name: [.adminKeyRefused, .adminScopeMissing, .throttled, .notFound, .adminSessionNotFound] + storage,
            auditEntries.name: [.adminKeyRefused, .adminScopeMissing, .throttled, .adminInvalidRequest] + storage,
            verifyAudit.name: [.adminKeyRefused, .adminScopeMissing, .throttled] + storage,
            openIDClients.name: [.adminKeyRefused, .adminScopeMissing, .throttled] + storage,
            createOpenIDClient.name: [.adminKeyRefused, .adminScopeMissing, .throttled, .adminInvalidRequest, .adminClientExists, .adminClientLimit] + storage,
            updateOpenIDClient.name: [.adminKeyRefused, .adminScopeMissing, .throttled, .adminInvalidRequest, .adminClientNotFound, .adminClientInFile] + storage,
            rotateOpenIDClientSecret.name: [.adminKeyRefused, .adminScopeMissing, .throttled, .adminInvalidRequest, .adminClientNotFound, .adminClientInFile] + storage,
            removeOpenIDClient.name: [.adminKeyRefused, .adminScopeMissing, .throttled, .adminClientNotFound, .adminClientInFile] + storage,
            // A report, never an error: an unready dependency is a check with status notReady.
            HealthContract.check.name: [],
        ]
    }()

    /// Declared pairs without a recorded example, each with the reason no replay can provoke it.
    public static let exemptions: [ContractExemption] = [
        .concurrentDeletion(signUp.name),
        .concurrentDeletion(login.name),
        .concurrentDeletion(reauthenticate.name),
        .concurrentDeletion(changePassword.name),
        .concurrentDeletion(changeUserId.name),
        .concurrentDeletion(requestPasswordReset.name),
        .concurrentDeletion(delete.name),
        .concurrentDeletion(enrollTOTP.name),
        .concurrentDeletion(regenerateRecoveryCodes.name),
        .concurrentDeletion(passkeyRegistrationOptions.name),
        .concurrentDeletion(registerPasskey.name),
        .emptyCredentialPassingRules(changePassword.name),
        .emptyCredentialPassingRules(changeUserId.name),
        .emptyCredentialPassingRules(requestPasswordReset.name),
        .emptyCredentialPassingRules(confirmPasswordReset.name),
        .emptyCredentialPassingRules(requestEmailCode.name),
        .emailCodeLoginOff(requestEmailCode.name),
        .emailCodeLoginOff(emailCodeLogin.name),
        ContractExemption(
            requestEmailVerification.name, .identityProfileUnavailable,
            reason: "only where userIds are usernames (the link goes to the email detail, read from Profile); the contract's configuration uses addresses (tested in IdentityStoreMailTests)"
        ),
        ContractExemption(
            externalLogin.name, .wrongCredentials,
            reason: "only when another request deletes the account between finding its linked identity and storing the new session; a replay sends one request at a time"
        ),
    ]

}

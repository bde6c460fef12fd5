// Every code, declared once. A contract names the codes its methods answer with from here; the gateway maps each to an
// HTTP status; a test checks that every code has both a family and a status.

extension KontoErrorCode {
    // MARK: wire: the wire layer's own (KontoWire)

    public static let frameTooLarge = Self(rawValue: "wire.frameTooLarge")
    public static let malformedFrame = Self(rawValue: "wire.malformedFrame")
    public static let unsupportedVersion = Self(rawValue: "wire.unsupportedVersion")
    public static let authenticationFailed = Self(rawValue: "wire.authenticationFailed")
    /// The server's welcome did not prove the caller's key: not the service it claims to be, or a relay.
    public static let serverAuthenticationFailed = Self(rawValue: "wire.serverAuthenticationFailed")
    public static let handshakeRequired = Self(rawValue: "wire.handshakeRequired")
    public static let unknownMethod = Self(rawValue: "wire.unknownMethod")
    /// The server's allow-list does not let the calling service call this method.
    public static let forbidden = Self(rawValue: "wire.forbidden")
    public static let deadlineExceeded = Self(rawValue: "wire.deadlineExceeded")
    public static let serviceUnavailable = Self(rawValue: "wire.serviceUnavailable")
    public static let timeout = Self(rawValue: "wire.timeout")
    public static let shuttingDown = Self(rawValue: "wire.shuttingDown")
    public static let overloaded = Self(rawValue: "wire.overloaded")
    public static let connectionClosed = Self(rawValue: "wire.connectionClosed")
    public static let protocolViolation = Self(rawValue: "wire.protocolViolation")
    public static let internalError = Self(rawValue: "wire.internalError")
    public static let badPayload = Self(rawValue: "wire.badPayload")
    public static let invalidRequest = Self(rawValue: "wire.invalidRequest")
    public static let cancelled = Self(rawValue: "wire.cancelled")

    // MARK: account: the account model's (SpeziAccount's errors)

    /// The userId (or another unique credential) belongs to another account.
    public static let credentialsTaken = Self(rawValue: "account.credentialsTaken")
    /// Wrong password or unknown user; deliberately the same code for both.
    public static let wrongCredentials = Self(rawValue: "account.wrongCredentials")
    /// One or more values were refused; the error's fields say which.
    public static let validationFailed = Self(rawValue: "account.validationFailed")
    public static let accountIdChanged = Self(rawValue: "account.accountIdChanged")
    public static let mutatingNonMutableAccountKeys = Self(rawValue: "account.mutatingNonMutableAccountKeys")
    public static let missingAccountValue = Self(rawValue: "account.missingAccountValue")
    public static let userIdNotRemovable = Self(rawValue: "account.userIdNotRemovable")
    /// A security-related operation needs a recent authentication.
    public static let reauthenticationRequired = Self(rawValue: "account.reauthenticationRequired")
    public static let notFound = Self(rawValue: "account.notFound")
    /// No valid session was presented.
    public static let unauthenticated = Self(rawValue: "account.unauthenticated")
    /// Too many failed attempts (per userId or client address); the error says when to retry.
    public static let throttled = Self(rawValue: "account.throttled")
    /// The details changed since the version the client read.
    public static let versionConflict = Self(rawValue: "account.versionConflict")
    /// Signing up with a session whose account already has credentials (only anonymous accounts are upgraded).
    public static let alreadySignedUp = Self(rawValue: "account.alreadySignedUp")
    /// A password reset token that is unknown, used or expired.
    public static let invalidResetToken = Self(rawValue: "account.invalidResetToken")
    /// An email verification token that is unknown, used, expired, or for an address the account no longer has.
    public static let invalidVerificationToken = Self(rawValue: "account.invalidVerificationToken")
    /// The deployment requires a verified address (`KONTO_IDENTITY_REQUIRE_VERIFIED_EMAIL`) and the account's is not yet.
    public static let emailNotVerified = Self(rawValue: "account.emailNotVerified")
    /// A security-related operation of an account with a second factor needs a privileged window opened with it
    /// (reauthentication with a code or passkey): the password alone is not enough.
    public static let secondFactorRequired = Self(rawValue: "account.secondFactorRequired")
    /// A second factor's code (an authenticator app's, or a recovery code) that is wrong, used already or out of its
    /// window; only ever after the password (or a session) proved who asks, so it tells a stranger nothing.
    public static let wrongSecondFactor = Self(rawValue: "account.wrongSecondFactor")
    /// A login's second-factor challenge that is unknown, used or expired: log in with the password again.
    public static let invalidChallenge = Self(rawValue: "account.invalidChallenge")
    /// The authenticator app's codes are refused after too many wrong answers in a row, until the owner recovers: a
    /// recovery code, a passkey, or a password reset through the mail.
    public static let factorLocked = Self(rawValue: "account.factorLocked")
    /// A second factor that is not the account's (an unknown factor id, or one not awaiting confirmation).
    public static let factorNotFound = Self(rawValue: "account.factorNotFound")
    /// A session that is not the caller's account's, or no longer live (an unknown session id).
    public static let sessionNotFound = Self(rawValue: "account.sessionNotFound")
    /// An external identity provider's ID token that does not verify (signature, issuer, audience, time, nonce);
    /// the message says which check refused it.
    public static let invalidIdentityToken = Self(rawValue: "account.invalidIdentityToken")
    /// An external identity that is not the account's (an unknown id).
    public static let identityNotFound = Self(rawValue: "account.identityNotFound")
    /// No application (an OpenID Provider client) has the owner's consent or a grant of the account by that id.
    public static let applicationNotFound = Self(rawValue: "account.applicationNotFound")
    /// Removing this would leave the account no way to sign in (no password, no other identity).
    public static let lastSignInMethod = Self(rawValue: "account.lastSignInMethod")

    // MARK: identity

    /// Every password-hashing slot is taken and the queue is full.
    public static let identityBusy = Self(rawValue: "identity.busy")
    public static let identityStorageUnavailable = Self(rawValue: "identity.storageUnavailable")
    public static let identityStorageFailure = Self(rawValue: "identity.storageFailure")
    /// Profile could not store or load the details; nothing was changed.
    public static let identityProfileUnavailable = Self(rawValue: "identity.profileUnavailable")
    /// An external identity provider could not be reached or answered what Konto cannot use (its discovery, keys or
    /// token endpoint); nothing was changed.
    public static let identityProviderUnavailable = Self(rawValue: "identity.providerUnavailable")

    // MARK: admin

    /// The operator key is malformed, unknown, wrong, expired or revoked: one code for all, so a refusal tells a
    /// stranger nothing about which keys exist.
    public static let adminKeyRefused = Self(rawValue: "admin.keyRefused")
    /// The operator key lacks the scope the action needs; nothing was done.
    public static let adminScopeMissing = Self(rawValue: "admin.scopeMissing")
    /// No operator key has this id.
    public static let adminKeyNotFound = Self(rawValue: "admin.keyNotFound")
    /// The account has no session with this id.
    public static let adminSessionNotFound = Self(rawValue: "admin.sessionNotFound")
    /// The admin request is well formed but asks for something Konto refuses (a scope the creating key lacks, an expiry
    /// in the past, a cursor that is not one of Konto's).
    public static let adminInvalidRequest = Self(rawValue: "admin.invalidRequest")
    /// No OpenID Provider client has this id.
    public static let adminClientNotFound = Self(rawValue: "admin.clientNotFound")
    /// An OpenID Provider client has this id already (the clients file's or the API's).
    public static let adminClientExists = Self(rawValue: "admin.clientExists")
    /// The client is the deployment's clients file's: changed only there.
    public static let adminClientInFile = Self(rawValue: "admin.clientInFile")
    /// As many clients as the deployment allows are registered through the API already (`KONTO_IDENTITY_OIDC_CLIENTS_MAX`).
    public static let adminClientLimit = Self(rawValue: "admin.clientLimit")
    /// The key is the last live one holding keys:write: revoking it would leave no key that can manage keys.
    public static let adminLastKeyManager = Self(rawValue: "admin.lastKeyManager")

    // MARK: profile

    /// `profile.create` for an account that already has details.
    public static let profileAlreadyExists = Self(rawValue: "profile.alreadyExists")
    /// One value's JSON encoding is over the service's value limit; the field names the key.
    public static let profileValueTooLarge = Self(rawValue: "profile.valueTooLarge")
    /// The account's JSON encoding would be over the service's account limit.
    public static let profileAccountTooLarge = Self(rawValue: "profile.accountTooLarge")
    /// The database cannot be reached or did not answer in time.
    public static let profileStorageUnavailable = Self(rawValue: "profile.storageUnavailable")
    /// An unexpected storage failure (e.g. an unreadable record).
    public static let profileStorageFailure = Self(rawValue: "profile.storageFailure")

    // MARK: notifications

    public static let notificationsInvalidRequest = Self(rawValue: "notifications.invalidRequest")
    public static let notificationsUnknownGroup = Self(rawValue: "notifications.unknownGroup")
    /// A group declared again for other event types.
    public static let notificationsGroupMismatch = Self(rawValue: "notifications.groupMismatch")
    public static let notificationsUnknownEvent = Self(rawValue: "notifications.unknownEvent")
    /// A webhook endpoint of that name exists already (the file's or the API's).
    public static let notificationsWebhookExists = Self(rawValue: "notifications.webhookExists")
    public static let notificationsUnknownWebhook = Self(rawValue: "notifications.unknownWebhook")
    /// The endpoint is the deployment's file's: changed only there.
    public static let notificationsWebhookInFile = Self(rawValue: "notifications.webhookInFile")
    /// As many endpoints as the deployment allows are stored already (`KONTO_NOTIFICATIONS_WEBHOOKS_MAX`).
    public static let notificationsWebhookLimit = Self(rawValue: "notifications.webhookLimit")
    public static let notificationsStorageUnavailable = Self(rawValue: "notifications.storageUnavailable")
    public static let notificationsStorageFailure = Self(rawValue: "notifications.storageFailure")

    // MARK: request and gateway: the gateway's own, HTTP only

    public static let requestMalformed = Self(rawValue: "request.malformed")
    public static let requestUnsupportedMediaType = Self(rawValue: "request.unsupportedMediaType")
    public static let requestBodyTooLarge = Self(rawValue: "request.bodyTooLarge")
    public static let requestNotFound = Self(rawValue: "request.notFound")
    public static let requestMethodNotAllowed = Self(rawValue: "request.methodNotAllowed")
    public static let requestRateLimited = Self(rawValue: "request.rateLimited")
    public static let requestPreconditionFailed = Self(rawValue: "request.preconditionFailed")
    /// An OpenID access token presented where its scopes do not reach (Konto's API reads the account with one; the
    /// rest needs the owner's session).
    public static let requestInsufficientScope = Self(rawValue: "request.insufficientScope")
    public static let gatewayServiceUnavailable = Self(rawValue: "gateway.serviceUnavailable")
    public static let gatewayUpstreamFailed = Self(rawValue: "gateway.upstreamFailed")
    public static let gatewayInternalError = Self(rawValue: "gateway.internalError")

    // MARK: Tables

    /// Every declared code.
    public static let all: Set<KontoErrorCode> = [
        .frameTooLarge, .malformedFrame, .unsupportedVersion, .authenticationFailed, .serverAuthenticationFailed,
        .handshakeRequired, .unknownMethod, .forbidden, .deadlineExceeded, .serviceUnavailable, .timeout, .shuttingDown,
        .overloaded, .connectionClosed, .protocolViolation, .internalError, .badPayload, .invalidRequest, .cancelled,
        .credentialsTaken, .wrongCredentials, .validationFailed, .accountIdChanged, .mutatingNonMutableAccountKeys,
        .missingAccountValue, .userIdNotRemovable, .reauthenticationRequired, .notFound, .unauthenticated, .throttled,
        .versionConflict, .alreadySignedUp, .invalidResetToken, .invalidVerificationToken, .emailNotVerified, .secondFactorRequired, .wrongSecondFactor, .invalidChallenge, .factorLocked, .factorNotFound, .sessionNotFound,
        .invalidIdentityToken, .identityNotFound, .lastSignInMethod, .applicationNotFound,
        .identityBusy, .identityStorageUnavailable, .identityStorageFailure, .identityProfileUnavailable, .identityProviderUnavailable,
        .adminKeyRefused, .adminScopeMissing, .adminKeyNotFound, .adminSessionNotFound, .adminInvalidRequest,
        .adminClientNotFound, .adminClientExists, .adminClientInFile, .adminClientLimit, .adminLastKeyManager,
        .profileAlreadyExists, .profileValueTooLarge, .profileAccountTooLarge, .profileStorageUnavailable, .profileStorageFailure,
        .notificationsInvalidRequest, .notificationsUnknownGroup, .notificationsGroupMismatch, .notificationsUnknownEvent,
        .notificationsWebhookExists, .notificationsUnknownWebhook, .notificationsWebhookInFile, .notificationsWebhookLimit,
        .notificationsStorageUnavailable, .notificationsStorageFailure,
        .requestMalformed, .requestUnsupportedMediaType, .requestBodyTooLarge, .requestNotFound, .requestMethodNotAllowed,
        .requestRateLimited, .requestPreconditionFailed, .requestInsufficientScope, .gatewayServiceUnavailable, .gatewayUpstreamFailed, .gatewayInternalError,
    ]

    /// The codes whose request may succeed if sent again: a service unreachable, busy, late or leaving, a storage
    /// outage, throttling. Every other code is final for that request. (A single answer may still say otherwise, as a
    /// modify that lost too many races does: its `account.versionConflict` is retryable, a stale If-Match's is not.)
    public static let retryableCodes: Set<KontoErrorCode> = [
        .deadlineExceeded, .overloaded, .shuttingDown, .timeout, .serviceUnavailable, .connectionClosed,
        .throttled,
        .identityBusy, .identityStorageUnavailable, .identityProfileUnavailable, .identityProviderUnavailable,
        .profileStorageUnavailable,
        .notificationsStorageUnavailable,
        .requestRateLimited, .gatewayServiceUnavailable,
    ]

    /// The declared codes of one family.
    public static func codes(of family: Family) -> [KontoErrorCode] {
        all.filter { $0.family == family }.sorted()
    }
}

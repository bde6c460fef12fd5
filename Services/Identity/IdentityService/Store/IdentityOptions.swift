import KontoContracts
import KontoWebAuthn

/// Identity's policies: session lifetimes, the privileged window, reset tokens, throttling and clean-ups.
public struct IdentityOptions: Sendable, Equatable {
    /// A session unused this long ends.
    public var sessionIdleTimeout: Duration = .seconds(7 * 24 * 3_600)
    /// A session ends this long after login however much it is used.
    public var sessionLifetime: Duration = .seconds(30 * 24 * 3_600)
    /// The idle expiry is pushed forward at most this often, so validating a session is a read, not a write, on
    /// almost every call.
    public var sessionTouchInterval: Duration = .seconds(60)
    /// How long after a password was entered (login, reauthenticate) security-related operations need no password.
    public var privilegedWindow: Duration = .seconds(5 * 60)
    /// How long a password reset token works.
    public var resetTokenLifetime: Duration = .seconds(3_600)
    /// Failed logins per userId and per client address.
    public var throttle = ThrottlePolicy()
    /// How long after a failed or abandoned sign-up its profile is deleted: longer than a Profile call may take, so a
    /// `profile.create` that answered late but committed is deleted after it committed. After a deletion, when the
    /// repair deletes the profile should Profile not have consumed the `deletingAccount` event by then.
    public var profileCleanupDelay: Duration = .seconds(30)
    /// How often the clean-up job looks for due clean-ups and stale reservations.
    public var cleanupInterval: Duration = .seconds(1)
    /// How often expired sessions and reset tokens, and anonymous accounts without a session, are deleted.
    public var pruneInterval: Duration = .seconds(600)
    /// A sign-up reservation older than this belongs to a process that died mid-sign-up and is abandoned.
    public var staleReservationAge: Duration = .seconds(600)
    /// A client (address or device marker) that signed in to an account within this long is known to it: failures
    /// from others do not hold it, and it has a reset-mail allowance of its own.
    public var knownClientAge: Duration = .seconds(90 * 86_400)
    /// Reset mails an account gets per hour from unknown clients together, and from each known client.
    public var resetMailsPerHour = 3
    /// How long a link confirming an address works.
    public var emailVerificationLifetime: Duration = .seconds(86_400)
    /// Verification mails an account may ask for per hour and address (sign-up's own and a new address's aside).
    public var verificationMailsPerHour = 3
    /// Verification codes an account's sessions may try per hour (each counted before it is checked, so a burst
    /// cannot pass together): with 10^8 codes and a day's lifetime, guessing one is hopeless, and a squatter's guesses
    /// hold the owner's app for at most the hour (the link still works).
    public var verificationCodeAttemptsPerHour = 10
    /// Mails to addresses an account chooses (verification links, a userId change's two mails) per hour, all its
    /// addresses together: a session cannot mail any number of chosen addresses.
    public var chosenAddressMailsPerAccountPerHour = 6
    /// Verification links to one address per hour, from every account together: nobody's mailbox is flooded from many
    /// accounts.
    public var verificationMailsPerAddressPerHour = 10
    /// Whether a code mailed to the userId signs in (`KONTO_IDENTITY_EMAIL_CODE_LOGIN`): off unless the deployment
    /// offers it.
    public var emailCodeLogin = false
    /// How long a mailed sign-in code works.
    public var emailCodeLifetime: Duration = .seconds(600)
    /// Sign-in code mails an account gets per hour from unknown clients together, and from each known client.
    public var emailCodeMailsPerHour = 5
    /// How long a correct password's second-factor challenge works.
    public var challengeLifetime: Duration = .seconds(5 * 60)
    /// Wrong second-factor codes per account (shared by every replica): five, then 30 s doubling to 15 minutes, so a
    /// 6-digit code is not guessed within a challenge's lifetime (nor in a year of trying).
    public var secondFactorThrottle = ThrottlePolicy(threshold: 5, baseDelay: .seconds(30), maximumDelay: .seconds(900), window: .seconds(3_600))
    /// Whether the owner is mailed about a sign-in from a client (address or browser) that never signed in to the
    /// account before (`KONTO_IDENTITY_NEW_CLIENT_MAIL`).
    public var newClientMail = true
    /// Consecutive wrong second-factor answers after which the authenticator app's codes are refused until the owner
    /// recovers: a recovery code, a passkey, or a password reset through the mail (`KONTO_IDENTITY_SECOND_FACTOR_LOCK_AFTER`;
    /// NIST SP 800-63B allows at most 100). docs/IDENTITY.md, "Second factor", works out what it leaves a guesser.
    public var secondFactorLockAfter = 10
    /// Consecutive wrong answers at which the owner is first mailed (before the lock).
    public var secondFactorWarnAfter = 3
    /// Answers one login challenge takes (right or wrong); then it is spent and the password is asked again.
    public var challengeAnswers = 5
    /// The name an authenticator app shows beside the account (the otpauth URI's issuer).
    public var totpIssuer = "Konto"
    /// The relying party passkeys are made for: its RP ID and the web origins whose pages may use them
    /// (`KONTO_WEBAUTHN_RP_ID`, `KONTO_WEBAUTHN_RP_NAME`, `KONTO_WEBAUTHN_ORIGINS`).
    public var relyingParty = WebAuthnVerifier.RelyingParty(id: "localhost", name: "Konto", origins: ["http://localhost:8080"])
    /// The most second factors an account may have (TOTPs, passkeys and its set of recovery codes).
    public var maximumFactors = 10
    /// The operator key installed when none exists yet (`KONTO_IDENTITY_BOOTSTRAP_OPERATOR_KEY`, every scope): the
    /// first key of a deployment made without the command line. Used once: any key stored, revoked or not, ends it.
    public var bootstrapOperatorKey: OperatorKeyText?
    /// Konto as an OpenID Provider (`KONTO_IDENTITY_OIDC_ISSUER`, `_KEYS`, `_CLIENTS`); nil: it is none.
    public var openID: OpenIDProviderSettings?
    /// An operator key's last use is written at most this often (an admin page's many calls are one write).
    public var operatorKeyTouchInterval: Duration = .seconds(60)
    /// How long audit entries are kept (`KONTO_AUDIT_RETENTION_DAYS`, a year unless set; 0 keeps them for ever). The
    /// chain's anchor keeps the last removed entry's hash, so what remains still verifies.
    public var auditRetention: Duration? = .seconds(365 * 86_400)
    /// How often the audit log's new entries are sealed into the chain (and retention runs).
    public var auditSealInterval: Duration = .seconds(2)
    /// How often the audit chain's head (position and hash) is written to the log at notice level, where a log
    /// shipper takes it out of reach of anyone who can write to the database (docs/ADMIN.md, "Tamper evidence").
    public var auditHeadLogInterval: Duration = .seconds(600)
    /// How often provider token revocations are looked for.
    public var revocationInterval: Duration = .seconds(5)
    /// The first retry's delay after a failed revocation (doubling to an hour).
    public var revocationBackoff: Duration = .seconds(5)
    /// Attempts before a revocation is given up as dead (about a day with the backoff above).
    public var revocationAttempts = 30
    /// How long a revocation given up is kept for the operator (its sealed token and accountId with it) before it is
    /// forgotten (`KONTO_IDENTITY_DEAD_REVOCATION_DAYS`).
    public var deadRevocationRetention: Duration = .seconds(30 * 86_400)
    /// The least time between two fetches of a provider's keys prompted by an unknown key id.
    public var providerKeyRefreshCooldown: Duration = .seconds(60)
    /// Passwords refused at sign-up, change and reset however well they pass the rules.
    public var commonPasswords = CommonPasswords.builtIn

    public init() {}
}

import KontoContracts
import KontoEvents
import KontoModel

/// What Konto as an OpenID Provider keeps (docs/OIDC.md): authorization codes, grants with their refresh tokens, and
/// the consents owners gave third-party clients. Only hashes of codes and tokens are stored.
/// Part of ``IdentityStorage``; each call is atomic, and what changes an owner's choices writes its audit entries in the
/// same step (these changes are not account events: no other service acts on them).
///
/// A code or grant counts only while its account is active, not disabled, and its credential at the version it was
/// made under: a password change, a new userId, a reset or a disabling ends every grant as it ends sessions, without a
/// statement of its own (retention removes the rows).
public protocol OpenIDStorage: Sendable {
    // MARK: Authorization codes

    /// Stores a code issued through the console session `code.sessionId`.
    /// - Throws: `notFound` when the session is gone or belongs to another account, or the account is not active at
    ///   the code's credential version.
    func createAuthorizationCode(_ code: StoredAuthorizationCode) async throws(IdentityStorageError)

    /// Redeems a code, in one step: an unused, unexpired one (its session still there, its account unchanged) is used
    /// up and handed to `exchange`, whose grant is stored (nil: the checks refused it, the code is used up all the
    /// same); a code used before revokes the grant its first use made. `exchange` must not block:
    /// it runs inside the transaction.
    func redeemAuthorizationCode(
        codeHash: [UInt8], at now: Timestamp, exchange: @escaping @Sendable (StoredAuthorizationCode) -> NewOpenIDGrant?
    ) async throws(IdentityStorageError) -> AuthorizationCodeRedemption

    // MARK: Grants and refresh tokens

    /// The grant, while it is live at `now` and its account unchanged; nil otherwise.
    func openIDGrant(id: String, at now: Timestamp) async throws(IdentityStorageError) -> StoredOpenIDGrant?

    /// Exchanges a refresh token, in one step: when it is the grant's current one, unexpired, and the grant live at
    /// `now` with its account unchanged, and `check` accepts the grant (its client is the one presenting it), the
    /// token is marked used, `replacement` becomes the grant's current token and the grant's idle expiry moves to the
    /// replacement's. A token used before revokes the whole grant.
    func rotateRefreshToken(
        tokenHash: [UInt8], at now: Timestamp, replacement: StoredRefreshToken, check: @escaping @Sendable (StoredOpenIDGrant) -> Bool
    ) async throws(IdentityStorageError) -> RefreshTokenRotation

    /// The grant whose refresh token (current or used) has this hash, if `clientId` is its client (RFC 7009: a client
    /// revokes only its own tokens); nil otherwise. Expiry does not matter: revoking a dead token is harmless.
    func openIDGrant(refreshTokenHash: [UInt8], clientId: String) async throws(IdentityStorageError) -> StoredOpenIDGrant?

    /// The live grant (as ``openIDGrant(id:at:)``) whose current refresh token, unexpired at `now`, has this hash; nil
    /// for a rotated-out, expired or unknown one.
    func openIDGrant(currentRefreshTokenHash: [UInt8], at now: Timestamp) async throws(IdentityStorageError) -> StoredOpenIDGrant?

    /// Ends a grant (its access tokens and refresh tokens with it), with `audit`; false when there was none with this
    /// id for this client.
    func revokeOpenIDGrant(id: String, clientId: String, audit: [AuditRecord]) async throws(IdentityStorageError) -> Bool

    /// The account's grants live at `now`, oldest first.
    func openIDGrants(accountId: String, at now: Timestamp) async throws(IdentityStorageError) -> [StoredOpenIDGrant]

    /// RP-initiated logout: ends the console session (with `events`, as a logout) and, in the same step, every grant
    /// made through it (with `audit`, told how many). How many grants ended; nil when there is no such session of this
    /// account (nothing changes).
    func endSessionAndGrants(
        sessionId: String, accountId: String, events: [AccountEvent], audit: @escaping @Sendable (_ grantsEnded: Int) -> [AuditRecord]
    ) async throws(IdentityStorageError) -> Int?

    // MARK: Consents

    /// The owner's consent for the client; nil when none is remembered.
    func openIDConsent(accountId: String, clientId: String) async throws(IdentityStorageError) -> StoredOpenIDConsent?

    /// Remembers (or replaces) a consent, with `audit`.
    /// - Throws: `notFound` when the account is not active.
    func saveOpenIDConsent(_ consent: StoredOpenIDConsent, audit: [AuditRecord]) async throws(IdentityStorageError)

    /// The account's consents, oldest first.
    func openIDConsents(accountId: String) async throws(IdentityStorageError) -> [StoredOpenIDConsent]

    /// The owner revokes a client: its consent and every grant of the account for it end, with `audit`, in one step.
    /// How many grants ended; nil when there was neither a consent nor a grant (nothing written).
    func revokeOpenIDClient(accountId: String, clientId: String, audit: [AuditRecord]) async throws(IdentityStorageError) -> Int?

    // MARK: Clients registered through the admin API

    /// Every stored client, oldest first.
    func openIDClients() async throws(IdentityStorageError) -> [StoredOpenIDClient]

    func openIDClient(id: String) async throws(IdentityStorageError) -> StoredOpenIDClient?

    /// Stores a new client unless one has its id or `limit` are stored already (checked and inserted in one step,
    /// whichever replica adds at the same time).
    func createOpenIDClient(_ client: StoredOpenIDClient, limit: Int) async throws(IdentityStorageError) -> OpenIDClientCreation

    /// Replaces a stored client's settings (never its secret) in one step with its consents' end where the change
    /// touches what a consent was given for (``IdentityOpenIDClientSettings/consentChanges(from:)``). A first-party
    /// client is changed only `mayChangeFirstParty` (decided on the row as it is then).
    func updateOpenIDClient(
        id: String, settings: IdentityOpenIDClientSettings, mayChangeFirstParty: Bool, at now: Timestamp
    ) async throws(IdentityStorageError) -> OpenIDClientUpdate

    /// Gives a secret client a new secret digest in one step: the current one becomes the previous one until
    /// `previousExpiresAt` (nil: forgotten at once). Nil when there is no such client with a secret, or it is
    /// first-party and not `mayChangeFirstParty`.
    func rotateOpenIDClientSecret(
        id: String, digest: [UInt8], previousExpiresAt: Timestamp?, mayChangeFirstParty: Bool, at now: Timestamp
    ) async throws(IdentityStorageError) -> StoredOpenIDClient?


    /// Removes a stored client and, in the same step, every account's codes, grants (with their refresh tokens) and
    /// consents for it. Nil when there was no such client.
    func removeOpenIDClient(id: String) async throws(IdentityStorageError) -> IdentityOpenIDClientRemoved?
}

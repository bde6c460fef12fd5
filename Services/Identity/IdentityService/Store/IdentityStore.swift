import Foundation
import KontoContracts
import KontoModel
import KontoWire
import Logging

/// Identity's operations (SpeziAccount's UserIdPasswordAccountService), independent of the wire: sign-up, login,
/// sessions, second factors, external identities, proofs by mail and the owner's changes, over an
/// ``IdentityStorage``, a ``PasswordHashingPool`` and a ``ProfileProvider``.
///
/// The operations live in parts by concern, each holding only what it needs (docs/ARCHITECTURE.md, "Identity"):
/// ``SessionAuthority`` (sessions, the password check, throttling), ``AccountMail``, ``SecondFactors``, ``SignIn``,
/// ``AccountOpener``, ``EmailProofs``, ``AccountSecurity``, ``ExternalIdentities`` and ``IdentityMaintenance``. This
/// type composes them once and is what the wire server and the tests call.
///
/// - No enumeration: an unknown userId is hashed against a dummy with the same parameters and answers the very
///   same `account.wrongCredentials` as a wrong password; a reset request answers the same either way. Sign-up's
///   `account.credentialsTaken` is the only place existence shows.
/// - Failed logins count per userId and per client address in the storage, shared by every replica.
/// - No half-made accounts: sign-up reserves the userId, stores the details through Profile, then activates; when
///   Profile fails the reservation is dropped at once and the profile deleted after ``IdentityOptions/profileCleanupDelay``.
public final class IdentityStore: Sendable {
    let context: IdentityContext
    let storage: any IdentityStorage
    let profile: any ProfileProvider
    let sessions: SessionAuthority
    let signIn: SignIn
    let factors: SecondFactors
    let opener: AccountOpener
    let proofs: EmailProofs
    let security: AccountSecurity
    let external: ExternalIdentities
    let maintenance: IdentityMaintenance
    let operators: Operators
    let changes: OperatorChanges
    let audit: AuditTrail
    let exporter: AccountExporter
    let openID: OpenIDProvider
    /// What answers do not wait for (a sign-in code's mail).
    public let pendingWork = PendingWork()

    public var configuration: AccountConfiguration { context.configuration }
    public var options: IdentityOptions { context.options }
    var hashing: PasswordHashingPool { sessions.hashing }

    /// - Parameter clock: the current time; tests move it to expire sessions and tokens.
    public init(
        storage: any IdentityStorage,
        hashing: PasswordHashingPool,
        profile: any ProfileProvider,
        configuration: AccountConfiguration,
        options: IdentityOptions = IdentityOptions(),
        resetTokenSeal: ResetTokenSeal,
        factorSecrets: FactorSecretBox,
        providers: ProviderClient? = nil,
        providerTokens: ProviderTokenBox? = nil,
        metrics: IdentityMetrics = IdentityMetrics(),
        clock: @escaping @Sendable () -> Timestamp = { .now },
        logger: Logger
    ) {
        let context = IdentityContext(configuration: configuration, options: options, clock: clock, logger: logger)
        let sessions = SessionAuthority(context: context, storage: storage, hashing: hashing, factorSecrets: factorSecrets)
        let mail = AccountMail(context: context, storage: storage, profile: profile, resetTokenSeal: resetTokenSeal, sessions: sessions)
        let factors = SecondFactors(context: context, storage: storage, factorSecrets: factorSecrets, sessions: sessions, mail: mail)
        let signIn = SignIn(context: context, storage: storage, profile: profile, sessions: sessions, factors: factors, mail: mail)
        // Without a box from the deployment's secret nothing it seals has to outlive the process.
        let providerTokens = providerTokens ?? ProviderTokenBox(secret: WireSecret(bytes: (0..<32).map { _ in UInt8.random(in: 0...255) }))
        let opener = AccountOpener(context: context, storage: storage, profile: profile, sessions: sessions, mail: mail, providerTokens: providerTokens)
        self.context = context
        self.storage = storage
        self.profile = profile
        self.sessions = sessions
        self.signIn = signIn
        self.factors = factors
        self.opener = opener
        self.proofs = EmailProofs(
            context: context, storage: storage, profile: profile, sessions: sessions, signIn: signIn, mail: mail, factorSecrets: factorSecrets,
            pendingWork: pendingWork
        )
        self.security = AccountSecurity(context: context, storage: storage, profile: profile, sessions: sessions, factors: factors, mail: mail)
        self.external = ExternalIdentities(
            context: context, storage: storage,
            providers: providers ?? ProviderClient(providers: .none, clock: clock, logger: logger),
            providerTokens: providerTokens, sessions: sessions, signIn: signIn, factors: factors, opener: opener, mail: mail
        )
        self.maintenance = IdentityMaintenance(context: context, storage: storage, profile: profile)
        self.operators = Operators(context: context, storage: storage, sessions: sessions)
        self.changes = OperatorChanges(context: context, storage: storage, profile: profile, mail: mail)
        self.audit = AuditTrail(context: context, storage: storage, operators: operators, metrics: metrics)
        let openID = OpenIDProvider(context: context, storage: storage, sessions: sessions, pairwiseKey: factorSecrets.openIDPairwiseKey)
        self.openID = openID
        self.exporter = AccountExporter(context: context, storage: storage, sessions: sessions, factors: factors, audit: audit, openID: openID)
    }

    /// Runs an operation in its audit scope: the changes it makes are audited as its (``AuditScope``), the operation
    /// named after the method calling this.
    func audited<T>(
        _ clientAddress: String?, client clientName: String? = nil, operation: String = #function, _ body: () async throws(ServiceError) -> T
    ) async throws(ServiceError) -> T {
        try await Self.run(in: AuditScope(operation: String(operation.prefix { $0 != "(" }), clientAddress: clientAddress, clientName: clientName), body).get()
    }

    /// `body` with `scope` as the task's audit scope, its typed error kept.
    private static func run<T>(in scope: AuditScope, _ body: () async throws(ServiceError) -> T) async -> Result<T, ServiceError> {
        await AuditScope.$current.withValue(scope) {
            do throws(ServiceError) {
                return .success(try await body())
            } catch {
                return .failure(error)
            }
        }
    }

    /// An admin call in its audit scope, recorded afterwards with its outcome and the key that made it (an operator's
    /// read answers only once its entry is written: `mustLand`; a change's entries are in its own transaction).
    /// `answeredAccountId` names the account a call made (its id is not known before).
    func adminCall<T>(
        _ call: IdentityOperatorCall, accountId: String?, mustLand: Bool, facts: [String: String] = [:], operation: String = #function,
        recordsSuccess: Bool = true, answeredAccountId: (T) -> String? = { _ in nil }, _ body: () async throws(ServiceError) -> T
    ) async throws(ServiceError) -> T {
        let scope = AuditScope(operation: String(operation.prefix { $0 != "(" }), clientAddress: call.clientAddress)
        switch await Self.run(in: scope, body) {
        case .success(let value):
            guard recordsSuccess else { return value }
            try await audit.recordAdminCall(accountId: accountId ?? answeredAccountId(value), facts: facts, outcome: "ok", scope: scope, mustLand: mustLand)
            return value
        case .failure(let error):
            // A refusal is recorded too, and a call that failed after it was authorized (a statement the storage
            // refused): its own error is what the caller gets. Not when the storage is unreachable (the entry could
            // not be written either, and trying would hold the answer until the storage gives up again), nor a
            // throttled one (as with sign-ins: the throttle's counts are their record, not a write per attempt).
            if ![.identityStorageUnavailable, .throttled].contains(error.code) {
                try? await audit.recordAdminCall(accountId: accountId, facts: facts, outcome: error.code.rawValue, scope: scope, mustLand: false)
            }
            throw error
        }
    }

    /// What a client is known by (``SessionAuthority/clientHashes(address:device:)``).
    func clientHashes(address: String?, device: String?) -> [[UInt8]] { sessions.clientHashes(address: address, device: device) }

    /// A sign-in attempt's throttling keys (``SessionAuthority/throttleKeys(normalizedUserId:clientAddress:)``).
    func throttleKeys(normalizedUserId: String, clientAddress: String?) -> [String] {
        sessions.throttleKeys(normalizedUserId: normalizedUserId, clientAddress: clientAddress)
    }

    // The operations, each answered by its part.

    // MARK: External identities
    @discardableResult public func runRevocations(limit: Int = 50) async -> Int { await external.runRevocations(limit: limit) }
    public func externalLogin(_ request: IdentityExternalLoginRequest) async throws(ServiceError) -> IdentityExternalLoginAnswer { try await audited(request.clientAddress, client: request.clientName) { () async throws(ServiceError) in try await external.externalLogin(request) } }
    public func linkIdentity(_ request: IdentityLinkIdentityRequest) async throws(ServiceError) -> IdentityExternalIdentity { try await audited(nil) { () async throws(ServiceError) in try await external.linkIdentity(request) } }
    public func listIdentities(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentityExternalIdentities { try await external.listIdentities(request) }
    public func unlinkIdentity(_ request: IdentityUnlinkIdentityRequest) async throws(ServiceError) -> IdentityDone { try await audited(nil) { () async throws(ServiceError) in try await external.unlinkIdentity(request) } }
    public func identityProviders(_ request: IdentityClientRequest) -> IdentityProviderList { external.identityProviders(request) }
    public func externalAuthorization(_ request: IdentityAuthorizationRequest) async throws(ServiceError) -> IdentityAuthorizationURL { try await external.externalAuthorization(request) }

    // MARK: Second factors
    public func listFactors(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentityFactors { try await factors.listFactors(request) }
    public func enrollTOTP(_ request: IdentitySecuredRequest) async throws(ServiceError) -> IdentityTOTPEnrolment { try await audited(nil) { () async throws(ServiceError) in try await factors.enrollTOTP(request) } }
    public func confirmTOTP(_ request: IdentityConfirmFactorRequest) async throws(ServiceError) -> IdentityFactor { try await audited(nil) { () async throws(ServiceError) in try await factors.confirmTOTP(request) } }
    public func removeFactor(_ request: IdentityRemoveFactorRequest) async throws(ServiceError) -> IdentityFactorRemoved { try await audited(nil) { () async throws(ServiceError) in try await factors.removeFactor(request) } }
    public func regenerateRecoveryCodes(_ request: IdentitySecuredRequest) async throws(ServiceError) -> IdentityRecoveryCodes { try await audited(nil) { () async throws(ServiceError) in try await factors.regenerateRecoveryCodes(request) } }
    public func passkeyRegistrationOptions(_ request: IdentitySecuredRequest) async throws(ServiceError) -> PasskeyCreationOptions { try await factors.passkeyRegistrationOptions(request) }
    public func registerPasskey(_ request: IdentityRegisterPasskeyRequest) async throws(ServiceError) -> IdentityFactor { try await audited(nil) { () async throws(ServiceError) in try await factors.registerPasskey(request) } }
    public func reauthenticate(_ request: IdentityReauthenticateRequest) async throws(ServiceError) -> IdentityPrivilege { try await audited(nil) { () async throws(ServiceError) in try await factors.reauthenticate(request) } }

    // MARK: Maintenance
    @discardableResult public func runCleanups(limit: Int = 100) async -> Int { await maintenance.runCleanups(limit: limit) }
    @discardableResult public func pruneExpired(limit: Int = 500) async -> PrunedRecords { await maintenance.pruneExpired(limit: limit) }

    /// Makes an account for an operator (scope accounts:write), with no session (``AccountOpener/createAccount(_:)``).
    public func createAccount(_ request: IdentityCreateAccountRequest) async throws(ServiceError) -> IdentityManagedAccount {
        try await adminCall(request.operatorCall, accountId: nil, mustLand: false, answeredAccountId: { $0.record.facts.accountId }) { () async throws(ServiceError) in
            _ = try await operators.authorize(request.operatorCall, scope: .accountsWrite)
            return try await opener.createAccount(request)
        }
    }

    /// Deletes an account for an operator (scope accounts:write), by the owner's deletion path.
    public func deleteAccount(_ request: IdentityOperatorAccountRequest) async throws(ServiceError) -> IdentityDone {
        try await adminCall(request.operatorCall, accountId: request.accountId, mustLand: false) { () async throws(ServiceError) in
            _ = try await operators.authorize(request.operatorCall, scope: .accountsWrite)
            return try await security.erase(accountId: request.accountId, at: context.clock())
        }
    }

    /// Mails the owner a password reset for an operator (scope accounts:write).
    public func sendPasswordReset(_ request: IdentityOperatorAccountRequest) async throws(ServiceError) -> IdentityDone {
        try await adminCall(request.operatorCall, accountId: request.accountId, mustLand: false) { () async throws(ServiceError) in
            _ = try await operators.authorize(request.operatorCall, scope: .accountsWrite)
            return try await proofs.sendPasswordReset(accountId: request.accountId, at: context.clock())
        }
    }

    /// Removes one of an account's second factors for an operator (scope factors:write); the owner is mailed.
    public func removeAccountFactor(_ request: IdentityAccountFactorRequest) async throws(ServiceError) -> IdentityFactorRemoved {
        try await adminCall(request.operatorCall, accountId: request.accountId, mustLand: false) { () async throws(ServiceError) in
            _ = try await operators.authorize(request.operatorCall, scope: .factorsWrite)
            return try await factors.remove(factorId: request.factorId, of: request.accountId, at: context.clock())
        }
    }

    /// Changes an account's details, userId and verification for an operator (scope accounts:write).
    public func updateAccount(_ request: IdentityUpdateAccountRequest) async throws(ServiceError) -> IdentityManagedAccount {
        try await adminCall(request.operatorCall, accountId: request.accountId, mustLand: false) { () async throws(ServiceError) in
            _ = try await operators.authorize(request.operatorCall, scope: .accountsWrite)
            return try await changes.updateAccount(request)
        }
    }

    /// Unlinks one of an account's provider identities for an operator (scope factors:write: a way in, as a second
    /// factor is), never its last way in.
    public func unlinkAccountIdentity(_ request: IdentityAccountIdentityRequest) async throws(ServiceError) -> IdentityDone {
        try await adminCall(request.operatorCall, accountId: request.accountId, mustLand: false) { () async throws(ServiceError) in
            _ = try await operators.authorize(request.operatorCall, scope: .factorsWrite)
            return try await external.unlink(identityId: request.identityId, of: request.accountId, at: context.clock())
        }
    }

    // MARK: Audit
    public func auditEntries(_ request: IdentityAuditQueryRequest) async throws(ServiceError) -> IdentityAuditPage {
        try await adminCall(request.operatorCall, accountId: request.accountId, mustLand: true) { () async throws(ServiceError) in try await audit.auditEntries(request) }
    }
    public func verifyAudit(_ request: IdentityAuditVerifyRequest) async throws(ServiceError) -> IdentityAuditVerification {
        try await adminCall(request.operatorCall, accountId: nil, mustLand: true) { () async throws(ServiceError) in try await audit.verifyAudit(request) }
    }
    /// Seals the audit log's new entries and applies its retention (the periodic job's; tests call it).
    public func maintainAudit() async { await audit.maintain() }

    // MARK: Operators
    /// Whether a key holds a scope; the action another service is about to take with it lands in the audit log first.
    public func operatorAuthorize(_ request: IdentityOperatorAuthorizeRequest) async throws(ServiceError) -> IdentityOperator {
        let facts = request.action.map { ["action": String($0.prefix(IdentityOperatorAuthorizeRequest.maximumActionLength))] } ?? [:]
        // A gate's success is the call's that follows, which records itself.
        return try await adminCall(request.operatorCall, accountId: nil, mustLand: true, facts: facts, recordsSuccess: request.gate != true) { () async throws(ServiceError) in
            try await operators.operatorAuthorize(request)
        }
    }
    public func createOperatorKey(_ request: IdentityCreateOperatorKeyRequest) async throws(ServiceError) -> IdentityOperatorKeyCreated { try await adminCall(request.operatorCall, accountId: nil, mustLand: false) { () async throws(ServiceError) in try await operators.createOperatorKey(request) } }
    public func listOperatorKeys(_ request: IdentityOperatorKeysRequest) async throws(ServiceError) -> IdentityOperatorKeys { try await adminCall(request.operatorCall, accountId: nil, mustLand: true) { () async throws(ServiceError) in try await operators.listOperatorKeys(request) } }
    public func revokeOperatorKey(_ request: IdentityOperatorKeyRequest) async throws(ServiceError) -> IdentityDone { try await adminCall(request.operatorCall, accountId: nil, mustLand: false) { () async throws(ServiceError) in try await operators.revokeOperatorKey(request) } }
    public func searchAccounts(_ request: IdentityAccountSearchRequest) async throws(ServiceError) -> IdentityAccountSearchPage { try await adminCall(request.operatorCall, accountId: nil, mustLand: true) { () async throws(ServiceError) in try await operators.searchAccounts(request) } }
    public func accountRecord(_ request: IdentityOperatorAccountRequest) async throws(ServiceError) -> IdentityAccountRecord { try await adminCall(request.operatorCall, accountId: request.accountId, mustLand: true) { () async throws(ServiceError) in try await operators.accountRecord(request) } }
    public func disableAccount(_ request: IdentityOperatorAccountRequest) async throws(ServiceError) -> IdentityDone { try await adminCall(request.operatorCall, accountId: request.accountId, mustLand: false) { () async throws(ServiceError) in try await operators.disableAccount(request) } }
    public func enableAccount(_ request: IdentityOperatorAccountRequest) async throws(ServiceError) -> IdentityDone { try await adminCall(request.operatorCall, accountId: request.accountId, mustLand: false) { () async throws(ServiceError) in try await operators.enableAccount(request) } }
    public func accountSessions(_ request: IdentityOperatorAccountRequest) async throws(ServiceError) -> IdentityAccountSessions { try await adminCall(request.operatorCall, accountId: request.accountId, mustLand: true) { () async throws(ServiceError) in try await operators.accountSessions(request) } }
    public func endAccountSessions(_ request: IdentityEndAccountSessionsRequest) async throws(ServiceError) -> IdentitySessionsEnded { try await adminCall(request.operatorCall, accountId: request.accountId, mustLand: false) { () async throws(ServiceError) in try await operators.endAccountSessions(request) } }

    // MARK: OpenID Provider clients (scope clients:write; the audit entry names the client)
    public func openIDClients(_ request: IdentityOpenIDClientsRequest) async throws(ServiceError) -> IdentityOpenIDClientList {
        try await clientsCall(request.operatorCall, clientId: nil) { (_) async throws(ServiceError) in try await openID.clients() }
    }
    public func createOpenIDClient(_ request: IdentityOpenIDClientRequest) async throws(ServiceError) -> IdentityOpenIDClientSaved {
        try await clientsCall(request.operatorCall, clientId: request.clientId) { (key) async throws(ServiceError) in try await openID.createClient(request, by: key) }
    }
    public func updateOpenIDClient(_ request: IdentityOpenIDClientRequest) async throws(ServiceError) -> IdentityOpenIDClientInfo {
        try await clientsCall(request.operatorCall, clientId: request.clientId) { (key) async throws(ServiceError) in try await openID.updateClient(request, by: key) }
    }
    public func rotateOpenIDClientSecret(_ request: IdentityRotateOpenIDClientSecretRequest) async throws(ServiceError) -> IdentityOpenIDClientSaved {
        try await clientsCall(request.operatorCall, clientId: request.clientId) { (key) async throws(ServiceError) in try await openID.rotateClientSecret(request, by: key) }
    }
    public func removeOpenIDClient(_ request: IdentityOpenIDClientIdRequest) async throws(ServiceError) -> IdentityOpenIDClientRemoved {
        try await clientsCall(request.operatorCall, clientId: request.clientId) { (_) async throws(ServiceError) in try await openID.removeClient(request) }
    }

    /// An admin call on the clients: the key must hold clients:write (`body` gets it, for what needs more); audited
    /// under the calling method's name with the client's id (a listing must land in the audit log before it answers,
    /// as reads do).
    private func clientsCall<T>(
        _ call: IdentityOperatorCall, clientId: String?, operation: String = #function, _ body: (StoredOperatorKey) async throws(ServiceError) -> T
    ) async throws(ServiceError) -> T {
        let facts = clientId.map { ["clientId": String($0.prefix(128))] } ?? [:]
        return try await adminCall(call, accountId: nil, mustLand: clientId == nil, facts: facts, operation: operation) { () async throws(ServiceError) in
            try await body(try await operators.authorize(call, scope: .clientsWrite))
        }
    }

    /// Installs the bootstrap operator key when no key exists yet (``IdentityOptions/bootstrapOperatorKey``).
    @discardableResult public func installBootstrapOperatorKey() async throws(ServiceError) -> Bool { try await operators.installBootstrapKey() }

    // MARK: Opening
    public func signUp(_ request: IdentitySignUpRequest) async throws(ServiceError) -> IdentityAccountSession { try await audited(request.clientAddress, client: request.clientName) { () async throws(ServiceError) in try await opener.signUp(request) } }
    public func signInAnonymously(_ request: IdentityClientRequest) async throws(ServiceError) -> IdentityAccountSession { try await audited(request.clientAddress, client: request.clientName) { () async throws(ServiceError) in try await opener.signInAnonymously(request) } }

    // MARK: Proofs by mail
    public func requestEmailCode(_ request: IdentityEmailCodeRequest) async throws(ServiceError) -> IdentityDone { try await audited(request.clientAddress) { () async throws(ServiceError) in try await proofs.requestEmailCode(request) } }
    public func emailCodeLogin(_ request: IdentityEmailCodeLoginRequest) async throws(ServiceError) -> IdentityLoginAnswer { try await audited(request.clientAddress, client: request.clientName) { () async throws(ServiceError) in try await proofs.emailCodeLogin(request) } }
    public func requestPasswordReset(_ request: IdentityPasswordResetRequest) async throws(ServiceError) -> IdentityDone { try await audited(request.clientAddress) { () async throws(ServiceError) in try await proofs.requestPasswordReset(request) } }
    public func confirmPasswordReset(_ request: IdentityConfirmPasswordResetRequest) async throws(ServiceError) -> IdentitySessionsEnded { try await audited(nil) { () async throws(ServiceError) in try await proofs.confirmPasswordReset(request) } }
    public func requestEmailVerification(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentityDone { try await audited(nil) { () async throws(ServiceError) in try await proofs.requestEmailVerification(request) } }
    public func confirmEmailVerification(_ request: IdentityConfirmEmailVerificationRequest) async throws(ServiceError) -> IdentityEmailVerified { try await audited(nil) { () async throws(ServiceError) in try await proofs.confirmEmailVerification(request) } }
    public func confirmEmailVerificationCode(_ request: IdentityConfirmEmailVerificationCodeRequest) async throws(ServiceError) -> IdentityEmailVerified { try await audited(nil) { () async throws(ServiceError) in try await proofs.confirmEmailVerificationCode(request) } }

    // MARK: The owner's changes
    public func changePassword(_ request: IdentityChangePasswordRequest) async throws(ServiceError) -> IdentitySessionsEnded { try await audited(nil) { () async throws(ServiceError) in try await security.changePassword(request) } }
    public func changeUserId(_ request: IdentityChangeUserIdRequest) async throws(ServiceError) -> IdentityDone { try await audited(nil) { () async throws(ServiceError) in try await security.changeUserId(request) } }
    public func delete(_ request: IdentityDeleteRequest) async throws(ServiceError) -> IdentityDone { try await audited(nil) { () async throws(ServiceError) in try await security.delete(request) } }

    // MARK: Sessions
    public func validateSession(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentitySessionInfo { try await sessions.validateSession(request) }
    public func logout(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentitySessionsEnded { try await audited(nil) { () async throws(ServiceError) in try await sessions.logout(request) } }
    public func logoutEverywhere(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentitySessionsEnded { try await audited(nil) { () async throws(ServiceError) in try await sessions.logoutEverywhere(request) } }
    public func listSessions(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentityAccountSessions { try await security.listSessions(request) }
    public func endSession(_ request: IdentityEndSessionRequest) async throws(ServiceError) -> IdentitySessionsEnded { try await audited(nil) { () async throws(ServiceError) in try await security.endSession(request) } }
    public func mailPreferences(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentityMailPreferences { try await security.mailPreferences(request) }
    public func setMailPreferences(_ request: IdentitySetMailPreferencesRequest) async throws(ServiceError) -> IdentityMailPreferences { try await audited(nil) { () async throws(ServiceError) in try await security.setMailPreferences(request) } }
    /// The OpenID Provider's issuer and published keys (none where Konto is no OpenID Provider).
    public func openIDKeys(_ request: IdentityOpenIDKeysRequest) -> IdentityOpenIDKeys {
        IdentityOpenIDKeys(issuer: options.openID?.issuer, keys: options.openID?.keys.published ?? [])
    }

    /// The authorization endpoint's decision (``OpenIDProvider/authorize(_:)``).
    public func openIDAuthorize(_ request: IdentityOpenIDAuthorizeRequest) async throws(ServiceError) -> IdentityOpenIDAuthorization {
        try await audited(request.clientAddress) { () async throws(ServiceError) in try await openID.authorize(request) }
    }

    /// RP-initiated logout (``OpenIDProvider/logout(_:)``).
    public func openIDLogout(_ request: IdentityOpenIDLogoutRequest) async throws(ServiceError) -> IdentityOpenIDLogout {
        try await audited(request.clientAddress) { () async throws(ServiceError) in try await openID.logout(request) }
    }

    /// The token endpoint (``OpenIDProvider/token(_:)``).
    public func openIDToken(_ request: IdentityOpenIDTokenRequest) async throws(ServiceError) -> IdentityOpenIDTokenResponse {
        try await audited(request.clientAddress) { () async throws(ServiceError) in try await openID.token(request) }
    }

    /// An access token's grant (``OpenIDProvider/accessGrant(_:)``).
    public func openIDAccessToken(_ request: IdentityOpenIDAccessTokenRequest) async throws(ServiceError) -> IdentityOpenIDAccessGrant {
        try await openID.accessGrant(request)
    }

    /// RFC 7662 introspection (``OpenIDProvider/introspect(_:)``).
    public func openIDIntrospect(_ request: IdentityOpenIDTokenQuery) async throws(ServiceError) -> IdentityOpenIDIntrospection {
        try await openID.introspect(request)
    }

    /// The applications with access to the caller's account (``OpenIDProvider/applications(_:)``).
    public func openIDApplications(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentityOpenIDApplications {
        try await openID.applications(request)
    }

    /// The owner revokes an application (``OpenIDProvider/revokeApplication(_:)``).
    public func revokeOpenIDApplication(_ request: IdentityRevokeApplicationRequest, clientAddress: String? = nil) async throws(ServiceError) -> IdentityApplicationRevoked {
        try await audited(clientAddress) { () async throws(ServiceError) in try await openID.revokeApplication(request) }
    }

    /// RFC 7009 revocation (``OpenIDProvider/revoke(_:)``).
    public func openIDRevoke(_ request: IdentityOpenIDTokenQuery) async throws(ServiceError) -> IdentityOpenIDRevocation {
        try await audited(request.clientAddress) { () async throws(ServiceError) in try await openID.revoke(request) }
    }
    public func exportAccount(_ request: IdentitySecuredRequest) async throws(ServiceError) -> IdentityAccountExport { try await audited(nil) { () async throws(ServiceError) in try await exporter.exportAccount(request) } }
    public func endOtherSessions(_ request: IdentitySecuredRequest) async throws(ServiceError) -> IdentitySessionsEnded { try await audited(nil) { () async throws(ServiceError) in try await security.endOtherSessions(request) } }

    // MARK: Signing in
    public func login(_ request: IdentityLoginRequest) async throws(ServiceError) -> IdentityLoginAnswer { try await audited(request.clientAddress, client: request.clientName) { () async throws(ServiceError) in try await signIn.login(request) } }
    public func completeSecondFactor(_ request: IdentitySecondFactorRequest) async throws(ServiceError) -> IdentityAccountSession { try await audited(request.clientAddress, client: request.clientName) { () async throws(ServiceError) in try await signIn.completeSecondFactor(request) } }
    public func passkeyLoginOptions(_ request: IdentityPasskeyOptionsRequest) -> PasskeyRequestOptions { signIn.passkeyLoginOptions(request) }
    public func passkeyLogin(_ request: IdentityPasskeyLoginRequest) async throws(ServiceError) -> IdentityAccountSession { try await audited(request.clientAddress, client: request.clientName) { () async throws(ServiceError) in try await signIn.passkeyLogin(request) } }
}

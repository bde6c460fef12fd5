import KontoContracts
import KontoModel
import Logging

/// The owner's copy of what Identity holds about their account (GDPR art. 15 and 20; ``IdentityContract/exportAccount``):
/// every row of the account's, as metadata. Secrets and digests (the password's hash, factor secrets, recovery codes,
/// tokens, the remembered clients' keyed digests) are held but never shown, not even hashed.
struct AccountExporter: IdentityPart {
    let context: IdentityContext
    let storage: any IdentityStorage
    let sessions: SessionAuthority
    let factors: SecondFactors
    let audit: AuditTrail
    /// The applications with access (consents and live grants), as the owner's Applications page lists them.
    let openID: OpenIDProvider

    /// Security-related: a stolen session must not carry off the account's history (its networks, userIds, the
    /// provider subjects) without the password or a window the second factor opened. Recorded `account.exported`
    /// before anything is read, so the copy lists itself.
    func exportAccount(_ request: IdentitySecuredRequest) async throws(ServiceError) -> IdentityAccountExport {
        let now = clock()
        let session = try await sessions.validSession(request.token, at: now)
        try await factors.authorizeSecurityOperation(session, currentPassword: request.currentPassword, at: now)
        let accountId = session.accountId
        let scope = AuditScope.current
        let (actorType, actorId) = scope?.actor(changing: accountId) ?? (.account, accountId)
        let record = AuditRecord(
            occurredAt: now, accountId: accountId, actorType: actorType, actorId: actorId, type: "account.exported", operation: scope?.operation,
            facts: [:], personal: scope?.personal
        )
        // Only while the account exists: a deletion meanwhile has erased its personal audit data, this entry's too.
        guard try await stored({ () async throws(IdentityStorageError) in try await storage.appendAudit([record], whileAccountExists: accountId) }) else {
            throw Self.unauthenticated
        }
        let userIdType = configuration.userIdType
        guard let account = try await stored({ () async throws(IdentityStorageError) in try await storage.accountRecord(accountId: accountId, userIdType: userIdType) }),
              let optOuts = try await stored({ () async throws(IdentityStorageError) in try await storage.mailOptOuts(accountId: accountId) })
        else {
            // Deleted meanwhile.
            throw Self.unauthenticated
        }
        let live = try await stored { () async throws(IdentityStorageError) in try await storage.accountSessions(accountId: accountId) } ?? []
        let pending = try await stored { () async throws(IdentityStorageError) in try await storage.pendingEmailVerifications(accountId: accountId, at: now) }
        let factorRows = try await stored { () async throws(IdentityStorageError) in try await storage.factors(accountId: accountId) }
        let identities = try await stored { () async throws(IdentityStorageError) in try await storage.externalIdentities(accountId: accountId) }
        let applications = try await openID.applications(accountId: accountId, at: now)
        let limit = IdentityAccountExport.maximumAuditEntries
        let entries = try await stored { () async throws(IdentityStorageError) in
            // Sealed first, as an operator's listing is: every entry shown has its place in the chain.
            try await audit.sealAll()
            return try await storage.auditEntries(AuditQuery(accountId: accountId, limit: limit + 1))
        }
        logger.info("account exported by its owner", metadata: ["konto.account_id": "\(accountId)"])
        return IdentityAccountExport(
            facts: account.facts, createdAt: account.createdAt, hasPassword: account.hasPassword, disabledAt: account.disabledAt,
            lastSignInAt: account.lastSignInAt, verifiedAt: account.verifiedAt, pendingVerifications: pending,
            mailPreferences: AccountSecurity.preferences(optOuts),
            sessions: live.filter { $0.isValid(at: now) }.map { $0.summary(current: $0.id == session.id) },
            factors: factorRows.map(SecondFactors.answer),
            identities: identities.map {
                IdentityAccountExport.LinkedIdentity(
                    id: $0.id, provider: $0.provider, subject: $0.subject, email: $0.email, emailVerified: $0.emailVerified, createdAt: $0.createdAt,
                    lastUsedAt: $0.lastUsedAt
                )
            },
            auditEntries: entries.prefix(limit).map(\.listed),
            auditComplete: entries.count <= limit,
            applications: applications
        )
    }
}

import Foundation
import HTTPTypes
import KontoContracts
import KontoModel
import OpenAPIRuntime

/// The admin API (docs/ADMIN.md): registered on the admin listener only (``GatewayServer/adminPaths``). The gateway
/// checks nothing itself: every call carries the operator key to Identity, which checks it and its scope.
extension GatewayAPI {
    /// The operator key the request presented (`Authorization: Bearer kop_…`) and the client's address, or 401.
    static func operatorCall() throws(GatewayProblem) -> IdentityOperatorCall {
        let scope = RequestScope.scope
        guard let key = scope.bearerToken, (1...OperatorKeyText.length).contains(key.utf8.count) else {
            throw GatewayProblem(
                status: .unauthorized, code: .adminKeyRefused, detail: "An operator key is required (Authorization: Bearer kop_…).",
                headers: [.wwwAuthenticate: "Bearer"]
            )
        }
        return IdentityOperatorCall(key: SecretString(key), clientAddress: scope.clientAddress)
    }

    func adminListKeys(_ input: Operations.AdminListKeys.Input) async throws -> Operations.AdminListKeys.Output {
        let keys = try await upstreams.identity(IdentityContract.listOperatorKeys, IdentityOperatorKeysRequest(operatorCall: Self.operatorCall()))
        return .ok(.init(body: .json(.init(keys: keys.keys.map(Self.operatorKey)))))
    }

    func adminCreateKey(_ input: Operations.AdminCreateKey.Input) async throws -> Operations.AdminCreateKey.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let created = try await upstreams.identity(IdentityContract.createOperatorKey, IdentityCreateOperatorKeyRequest(
            operatorCall: Self.operatorCall(), name: body.name, scopes: body.scopes.compactMap { OperatorScope(rawValue: $0.rawValue) },
            expiresAt: body.expiresAt.map(Timestamp.init)
        ))
        return .created(.init(body: .json(.init(key: Self.operatorKey(created.key), secret: created.secret.value))))
    }

    func adminRevokeKey(_ input: Operations.AdminRevokeKey.Input) async throws -> Operations.AdminRevokeKey.Output {
        _ = try await upstreams.identity(IdentityContract.revokeOperatorKey, IdentityOperatorKeyRequest(operatorCall: Self.operatorCall(), keyId: input.path.keyId))
        return .noContent(.init())
    }

    func adminSearchAccounts(_ input: Operations.AdminSearchAccounts.Input) async throws -> Operations.AdminSearchAccounts.Output {
        let query = input.query
        let page = try await upstreams.identity(IdentityContract.searchAccounts, IdentityAccountSearchRequest(
            operatorCall: Self.operatorCall(), userIdPrefix: query.userIdPrefix, userIdContains: query.userIdContains, verified: query.verified,
            disabled: query.disabled, anonymous: query.anonymous, createdAfter: query.createdAfter.map(Timestamp.init), createdBefore: query.createdBefore.map(Timestamp.init),
            hasSecondFactor: query.hasSecondFactor, provider: query.provider, cursor: query.cursor, limit: query.limit
        ))
        return .ok(.init(body: .json(.init(
            accounts: page.accounts.map {
                .init(
                    accountId: $0.accountId, userId: $0.userId, anonymous: $0.anonymous, verified: $0.verified, disabled: $0.disabled, createdAt: $0.createdAt.date
                )
            },
            nextCursor: page.nextCursor, totalEstimate: page.totalEstimate, totalIsExact: page.totalIsExact
        ))))
    }

    func adminGetAccount(_ input: Operations.AdminGetAccount.Input) async throws -> Operations.AdminGetAccount.Output {
        // Identity checks the key and its scope first; only then is Profile asked for the details.
        let record = try await upstreams.identity(IdentityContract.accountRecord, IdentityOperatorAccountRequest(operatorCall: Self.operatorCall(), accountId: input.path.accountId))
        let profile: ProfileRecord?
        do {
            profile = try await upstreams.profile(ProfileContract.load, ProfileLoadRequest(accountId: record.facts.accountId))
        } catch {
            // An anonymous account has no details until it signs up.
            guard error.code == AccountError.Code.notFound else { throw error }
            profile = nil
        }
        return .ok(.init(body: .json(adminAccount(record, profile: profile))))
    }

    /// An account as the admin API shows it: assembled from Identity's facts and Profile's details, with its
    /// credential metadata.
    func adminAccount(_ record: IdentityAccountRecord, profile: ProfileRecord?) -> Components.Schemas.AdminAccount {
        let credentials = Components.Schemas.CredentialRecord(
            createdAt: record.createdAt.date, hasPassword: record.hasPassword, disabledAt: record.disabledAt?.date, lastSignInAt: record.lastSignInAt?.date, verifiedAt: record.verifiedAt?.date,
            factors: record.factors.map { .init(id: $0.id, kind: $0.kind, name: $0.name, createdAt: $0.createdAt.date) },
            identities: record.identities.map { .init(id: $0.id, provider: $0.provider, createdAt: $0.createdAt.date, lastUsedAt: $0.lastUsedAt?.date) },
            sessionCount: record.sessionCount
        )
        return .init(account: assembler.account(record.facts, profile: profile), credentials: credentials)
    }

    func adminDisableAccount(_ input: Operations.AdminDisableAccount.Input) async throws -> Operations.AdminDisableAccount.Output {
        let done = try await upstreams.identity(IdentityContract.disableAccount, IdentityOperatorAccountRequest(operatorCall: Self.operatorCall(), accountId: input.path.accountId))
        // Its sessions ended: answered once every gateway's cache has dropped them (docs/SCALING.md).
        cache.invalidate(accountId: input.path.accountId)
        await awaitCaches(done.eventIds)
        return .noContent(.init())
    }

    func adminDeleteAccount(_ input: Operations.AdminDeleteAccount.Input) async throws -> Operations.AdminDeleteAccount.Output {
        let done = try await upstreams.identity(IdentityContract.deleteAccount, IdentityOperatorAccountRequest(operatorCall: Self.operatorCall(), accountId: input.path.accountId))
        // As the owner's deletion: answered once every gateway's cache has dropped its sessions.
        cache.invalidate(accountId: input.path.accountId)
        await awaitCaches(done.eventIds)
        return .noContent(.init())
    }

    func adminSendPasswordReset(_ input: Operations.AdminSendPasswordReset.Input) async throws -> Operations.AdminSendPasswordReset.Output {
        _ = try await upstreams.identity(IdentityContract.sendPasswordReset, IdentityOperatorAccountRequest(operatorCall: Self.operatorCall(), accountId: input.path.accountId))
        return .accepted(.init())
    }

    func adminUnlinkIdentity(_ input: Operations.AdminUnlinkIdentity.Input) async throws -> Operations.AdminUnlinkIdentity.Output {
        _ = try await upstreams.identity(IdentityContract.unlinkAccountIdentity, IdentityAccountIdentityRequest(
            operatorCall: Self.operatorCall(), accountId: input.path.accountId, identityId: input.path.identityId
        ))
        return .noContent(.init())
    }

    func adminRemoveFactor(_ input: Operations.AdminRemoveFactor.Input) async throws -> Operations.AdminRemoveFactor.Output {
        _ = try await upstreams.identity(IdentityContract.removeAccountFactor, IdentityAccountFactorRequest(
            operatorCall: Self.operatorCall(), accountId: input.path.accountId, factorId: input.path.factorId
        ))
        return .noContent(.init())
    }

    func adminEnableAccount(_ input: Operations.AdminEnableAccount.Input) async throws -> Operations.AdminEnableAccount.Output {
        _ = try await upstreams.identity(IdentityContract.enableAccount, IdentityOperatorAccountRequest(operatorCall: Self.operatorCall(), accountId: input.path.accountId))
        return .noContent(.init())
    }

    func adminListSessions(_ input: Operations.AdminListSessions.Input) async throws -> Operations.AdminListSessions.Output {
        let found = try await upstreams.identity(IdentityContract.accountSessions, IdentityOperatorAccountRequest(operatorCall: Self.operatorCall(), accountId: input.path.accountId))
        return .ok(.init(body: .json(.init(sessions: found.sessions.map {
            .init(
                id: $0.id, createdAt: $0.createdAt.date, idleExpiresAt: $0.idleExpiresAt.date, absoluteExpiresAt: $0.absoluteExpiresAt.date,
                assuranceLevel: $0.assuranceLevel, privilegedUntil: $0.privilegedUntil?.date, lastUsedAt: $0.lastUsedAt?.date,
                signInMethod: $0.signInMethod, clientAddress: $0.clientAddress, clientName: $0.clientName
            )
        }))))
    }

    func adminEndSessions(_ input: Operations.AdminEndSessions.Input) async throws -> Operations.AdminEndSessions.Output {
        let ended = try await endSessions(accountId: input.path.accountId, sessionId: nil)
        return .ok(.init(body: .json(.init(sessionsEnded: ended.sessionsEnded))))
    }

    func adminEndSession(_ input: Operations.AdminEndSession.Input) async throws -> Operations.AdminEndSession.Output {
        _ = try await endSessions(accountId: input.path.accountId, sessionId: input.path.sessionId)
        return .noContent(.init())
    }

    /// Ends sessions as an operator asked, answered once every gateway's cache has dropped them.
    private func endSessions(accountId: String, sessionId: String?) async throws -> IdentitySessionsEnded {
        let ended = try await upstreams.identity(IdentityContract.endAccountSessions, IdentityEndAccountSessionsRequest(
            operatorCall: Self.operatorCall(), accountId: accountId, sessionId: sessionId
        ))
        cache.invalidate(accountId: accountId)
        await awaitCaches(ended.eventIds)
        return ended
    }

    func adminListAudit(_ input: Operations.AdminListAudit.Input) async throws -> Operations.AdminListAudit.Output {
        let query = input.query
        let page = try await upstreams.identity(IdentityContract.auditEntries, IdentityAuditQueryRequest(
            operatorCall: Self.operatorCall(), accountId: query.accountId, actorId: query.actorId, type: query._type,
            occurredAfter: query.occurredAfter.map(Timestamp.init), occurredBefore: query.occurredBefore.map(Timestamp.init), cursor: query.cursor,
            limit: query.limit
        ))
        return .ok(.init(body: .json(.init(entries: page.entries.map(Self.auditEntry), nextCursor: page.nextCursor))))
    }

    func adminVerifyAudit(_ input: Operations.AdminVerifyAudit.Input) async throws -> Operations.AdminVerifyAudit.Output {
        let found = try await upstreams.identity(IdentityContract.verifyAudit, IdentityAuditVerifyRequest(operatorCall: Self.operatorCall()))
        return .ok(.init(body: .json(.init(
            intact: found.intact, entriesChecked: found.entriesChecked, anchorPosition: found.anchorPosition, headPosition: found.headPosition,
            headHash: found.headHash, brokenAt: found.brokenAt, problem: found.problem
        ))))
    }

    static func auditEntry(_ entry: IdentityAuditEntry) -> Components.Schemas.AuditEntry {
        .init(
            id: entry.id.uuidString.lowercased(), position: entry.position, occurredAt: entry.occurredAt.date, accountId: entry.accountId,
            actorType: Components.Schemas.AuditEntry.ActorTypePayload(rawValue: entry.actorType.rawValue) ?? .system, actorId: entry.actorId,
            _type: entry.type, operation: entry.operation, facts: .init(additionalProperties: entry.facts),
            personal: entry.personal.map { .init(additionalProperties: $0) }, erased: entry.erased
        )
    }

    static func operatorKey(_ key: IdentityOperatorKey) -> Components.Schemas.OperatorKey {
        .init(
            id: key.id, name: key.name, scopes: key.scopes.compactMap { Components.Schemas.OperatorScope(rawValue: $0.rawValue) },
            createdAt: key.createdAt.date, createdBy: key.createdBy, expiresAt: key.expiresAt?.date, lastUsedAt: key.lastUsedAt?.date,
            revokedAt: key.revokedAt?.date
        )
    }
}

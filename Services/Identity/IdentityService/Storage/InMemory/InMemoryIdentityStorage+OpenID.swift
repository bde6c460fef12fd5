import KontoContracts
import KontoEvents
import KontoModel
import Synchronization

extension InMemoryIdentityStorage {
    // MARK: Authorization codes

    public func createAuthorizationCode(_ code: StoredAuthorizationCode) throws(IdentityStorageError) {
        try state.withLock { state throws(IdentityStorageError) in
            guard state.sessions[code.sessionId]?.accountId == code.accountId,
                  state.grantable(code.accountId, credentialVersion: code.credentialVersion)
            else { throw IdentityStorageError(.notFound) }
            state.oidcCodes[code.codeHash] = OpenIDCode(code: code, sessionId: code.sessionId)
        }
    }

    public func redeemAuthorizationCode(
        codeHash: [UInt8], at now: Timestamp, exchange: @escaping @Sendable (StoredAuthorizationCode) -> NewOpenIDGrant?
    ) -> AuthorizationCodeRedemption {
        state.withLock { state in
            guard let stored = state.oidcCodes[codeHash] else { return .unknown }
            let code = stored.code
            if stored.usedAt != nil {
                let revoked = stored.grantId.map { state.removeGrant($0) } ?? false
                return .reused(accountId: code.accountId, clientId: code.clientId, revokedGrant: revoked)
            }
            guard stored.sessionId != nil, now < code.expiresAt, state.grantable(code.accountId, credentialVersion: code.credentialVersion) else {
                return .unknown
            }
            state.oidcCodes[codeHash]?.usedAt = now
            guard let new = exchange(code) else { return .refused(code) }
            state.oidcGrants[new.grant.id] = new.grant
            if let token = new.refreshToken {
                state.refreshTokens[token.tokenHash] = RefreshToken(grantId: new.grant.id, expiresAt: token.expiresAt)
            }
            state.oidcCodes[codeHash]?.grantId = new.grant.id
            return .redeemed(code, new.grant)
        }
    }

    // MARK: Grants and refresh tokens

    public func openIDGrant(id: String, at now: Timestamp) -> StoredOpenIDGrant? {
        state.withLock { $0.liveGrant(id, at: now) }
    }

    public func rotateRefreshToken(
        tokenHash: [UInt8], at now: Timestamp, replacement: StoredRefreshToken, check: @escaping @Sendable (StoredOpenIDGrant) -> Bool
    ) -> RefreshTokenRotation {
        state.withLock { state in
            guard let token = state.refreshTokens[tokenHash], let grant = state.oidcGrants[token.grantId] else { return .unknown }
            if token.used {
                _ = state.removeGrant(grant.id)
                return .reused(grant)
            }
            guard now < token.expiresAt, state.liveGrant(grant.id, at: now) != nil else { return .unknown }
            guard check(grant) else { return .refused }
            state.refreshTokens[tokenHash]?.used = true
            state.refreshTokens[replacement.tokenHash] = RefreshToken(grantId: grant.id, expiresAt: replacement.expiresAt)
            var rotated = grant
            rotated.idleExpiresAt = replacement.expiresAt
            rotated.lastRefreshedAt = now
            state.oidcGrants[grant.id] = rotated
            return .rotated(rotated)
        }
    }

    public func openIDGrant(refreshTokenHash: [UInt8], clientId: String) -> StoredOpenIDGrant? {
        state.withLock { state in
            guard let token = state.refreshTokens[refreshTokenHash], let grant = state.oidcGrants[token.grantId], grant.clientId == clientId else {
                return nil
            }
            return grant
        }
    }

    public func openIDGrant(currentRefreshTokenHash: [UInt8], at now: Timestamp) -> StoredOpenIDGrant? {
        state.withLock { state in
            guard let token = state.refreshTokens[currentRefreshTokenHash], !token.used, now < token.expiresAt else { return nil }
            return state.liveGrant(token.grantId, at: now)
        }
    }

    public func revokeOpenIDGrant(id: String, clientId: String, audit: [AuditRecord]) -> Bool {
        state.withLock { state in
            guard state.oidcGrants[id]?.clientId == clientId else { return false }
            _ = state.removeGrant(id)
            state.appendAudit(audit)
            return true
        }
    }

    public func openIDGrants(accountId: String, at now: Timestamp) -> [StoredOpenIDGrant] {
        state.withLock { state in
            state.oidcGrants.values
                .filter { $0.accountId == accountId && state.liveGrant($0.id, at: now) != nil }
                .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        }
    }

    public func endSessionAndGrants(
        sessionId: String, accountId: String, events: [AccountEvent], audit: @escaping @Sendable (Int) -> [AuditRecord]
    ) -> Int? {
        state.withLock { state in
            guard state.sessions[sessionId]?.accountId == accountId else { return nil }
            let grants = state.oidcGrants.values.filter { $0.sessionId == sessionId && $0.accountId == accountId }.map(\.id)
            for id in grants {
                _ = state.removeGrant(id)
            }
            _ = state.removeSession(sessionId)
            state.outbox += events
            state.appendAudit(audit(grants.count))
            return grants.count
        }
    }

    // MARK: Consents

    public func openIDConsent(accountId: String, clientId: String) -> StoredOpenIDConsent? {
        state.withLock { $0.oidcConsents[accountId]?[clientId] }
    }

    public func saveOpenIDConsent(_ consent: StoredOpenIDConsent, audit: [AuditRecord]) throws(IdentityStorageError) {
        try state.withLock { state throws(IdentityStorageError) in
            guard state.active(consent.accountId) != nil else { throw IdentityStorageError(.notFound) }
            state.oidcConsents[consent.accountId, default: [:]][consent.clientId] = consent
            state.appendAudit(audit)
        }
    }

    public func openIDConsents(accountId: String) -> [StoredOpenIDConsent] {
        state.withLock { state in
            (state.oidcConsents[accountId] ?? [:]).values.sorted { ($0.grantedAt, $0.clientId) < ($1.grantedAt, $1.clientId) }
        }
    }

    public func revokeOpenIDClient(accountId: String, clientId: String, audit: [AuditRecord]) -> Int? {
        state.withLock { state in
            let hadConsent = state.oidcConsents[accountId]?.removeValue(forKey: clientId) != nil
            let grants = state.oidcGrants.values.filter { $0.accountId == accountId && $0.clientId == clientId }.map(\.id)
            for id in grants {
                _ = state.removeGrant(id)
            }
            guard hadConsent || !grants.isEmpty else { return nil }
            state.appendAudit(audit)
            return grants.count
        }
    }
}

extension InMemoryIdentityStorage {
    // MARK: Clients registered through the admin API

    public func openIDClients() -> [StoredOpenIDClient] {
        state.withLock { $0.oidcClients.values.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) } }
    }

    public func openIDClient(id: String) -> StoredOpenIDClient? {
        state.withLock { $0.oidcClients[id] }
    }

    public func createOpenIDClient(_ client: StoredOpenIDClient, limit: Int) -> OpenIDClientCreation {
        state.withLock { state in
            guard state.oidcClients[client.id] == nil else { return .idTaken }
            guard state.oidcClients.count < limit else { return .limitReached }
            state.oidcClients[client.id] = client
            return .created
        }
    }

    public func updateOpenIDClient(id: String, settings: IdentityOpenIDClientSettings, mayChangeFirstParty: Bool, at now: Timestamp) -> OpenIDClientUpdate {
        state.withLock { state in
            guard var client = state.oidcClients[id] else { return .notFound }
            if client.settings.firstParty || settings.firstParty, !mayChangeFirstParty { return .firstPartyRefused }
            let changed = settings.consentChanges(from: client.settings)
            client.settings = settings
            client.updatedAt = now
            state.oidcClients[id] = client
            var ended = 0
            if !changed.isEmpty {
                for accountId in Array(state.oidcConsents.keys) where state.oidcConsents[accountId]?.removeValue(forKey: id) != nil {
                    ended += 1
                }
            }
            return .updated(client, changed: changed, consentsEnded: ended)
        }
    }

    public func rotateOpenIDClientSecret(id: String, digest: [UInt8], previousExpiresAt: Timestamp?, mayChangeFirstParty: Bool, at now: Timestamp) -> StoredOpenIDClient? {
        state.withLock { state in
            guard var client = state.oidcClients[id], let current = client.secretDigest, mayChangeFirstParty || !client.settings.firstParty else { return nil }
            client.previousSecretDigest = previousExpiresAt == nil ? nil : current
            client.previousSecretExpiresAt = previousExpiresAt
            client.secretDigest = digest
            client.secretCreatedAt = now
            client.updatedAt = now
            state.oidcClients[id] = client
            return client
        }
    }

    public func removeOpenIDClient(id: String) -> IdentityOpenIDClientRemoved? {
        state.withLock { state in
            guard state.oidcClients.removeValue(forKey: id) != nil else { return nil }
            state.oidcCodes = state.oidcCodes.filter { $0.value.code.clientId != id }
            let grants = state.oidcGrants.values.filter { $0.clientId == id }.map(\.id)
            for grant in grants {
                _ = state.removeGrant(grant)
            }
            var consents = 0
            for accountId in Array(state.oidcConsents.keys) where state.oidcConsents[accountId]?.removeValue(forKey: id) != nil {
                consents += 1
            }
            return IdentityOpenIDClientRemoved(grantsEnded: grants.count, consentsRemoved: consents)
        }
    }
}

extension InMemoryIdentityStorage.State {
    /// Whether the account is active, enabled and at `credentialVersion`.
    func grantable(_ accountId: String, credentialVersion: Int64) -> Bool {
        guard let credential = active(accountId) else { return false }
        return credential.disabledAt == nil && credential.credentialVersion == credentialVersion
    }

    /// The grant, while live at `now` and its account unchanged.
    func liveGrant(_ id: String, at now: Timestamp) -> StoredOpenIDGrant? {
        guard let grant = oidcGrants[id], grant.isLive(at: now), grantable(grant.accountId, credentialVersion: grant.credentialVersion) else {
            return nil
        }
        return grant
    }

    /// Removes a grant with its refresh tokens (a code that made it forgets it, as PostgreSQL's ON DELETE SET NULL).
    mutating func removeGrant(_ id: String) -> Bool {
        guard oidcGrants.removeValue(forKey: id) != nil else { return false }
        refreshTokens = refreshTokens.filter { $0.value.grantId != id }
        for (hash, code) in oidcCodes where code.grantId == id {
            oidcCodes[hash]?.grantId = nil
        }
        return true
    }

    /// Retention, as ``PostgresIdentityStorage``'s.
    mutating func pruneOpenID(at now: Timestamp, limit: Int) {
        for hash in oidcCodes.filter({ $0.value.code.keepUntil <= now }).map(\.key).prefix(limit) {
            oidcCodes[hash] = nil
        }
        let ended = oidcGrants.values.filter { grant in
            !grant.isLive(at: now) || credentials[grant.accountId].map { $0.credentialVersion != grant.credentialVersion || $0.disabledAt != nil } ?? true
        }
        for grant in ended.prefix(limit) {
            _ = removeGrant(grant.id)
        }
        for hash in refreshTokens.filter({ $0.value.expiresAt <= now }).map(\.key).prefix(limit) {
            refreshTokens[hash] = nil
        }
    }
}

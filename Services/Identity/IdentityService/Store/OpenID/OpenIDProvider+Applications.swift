import Foundation
import KontoContracts
import KontoModel
import Logging

extension OpenIDProvider {
    /// The applications with access to the session's account: the owner's consents and the live grants, by client.
    func applications(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentityOpenIDApplications {
        let now = clock()
        let accountId = try await sessions.validSession(request.token, at: now).accountId
        return IdentityOpenIDApplications(applications: try await applications(accountId: accountId, at: now))
    }

    /// The account's applications, by client: the listing's and the owner's export's.
    func applications(accountId: String, at now: Timestamp) async throws(ServiceError) -> [IdentityOpenIDApplication] {
        let consents = try await stored { () async throws(IdentityStorageError) in try await storage.openIDConsents(accountId: accountId) }
        let grants = try await stored { () async throws(IdentityStorageError) in try await storage.openIDGrants(accountId: accountId, at: now) }
        let clientIds = Set(consents.map(\.clientId)).union(grants.map(\.clientId)).sorted()
        var applications: [IdentityOpenIDApplication] = []
        for clientId in clientIds {
            let consent = consents.first { $0.clientId == clientId }
            let held = grants.filter { $0.clientId == clientId }
            let used = held.map { $0.lastRefreshedAt ?? $0.createdAt }.max()
            var name = clientId
            if let settings, let client = try await registeredClient(clientId, settings: settings, at: now) { name = client.name }
            applications.append(IdentityOpenIDApplication(
                clientId: clientId, name: name,
                scopes: Set(consent?.scopes ?? []).union(held.flatMap(\.scopes)).sorted(), consentedAt: consent?.grantedAt, grants: held.count,
                lastUsedAt: used
            ))
        }
        return applications
    }

    /// The owner takes an application's access away: its consent (the next sign-in asks again) and every grant (its
    /// tokens stop working at once). Not security-related: it only takes access away, and the owner signs in to the
    /// application again to give it back.
    /// - Throws: `account.applicationNotFound` when the application has neither.
    func revokeApplication(_ request: IdentityRevokeApplicationRequest) async throws(ServiceError) -> IdentityApplicationRevoked {
        let now = clock()
        let accountId = try await sessions.validSession(request.token, at: now).accountId
        let clientId = request.clientId
        guard !clientId.isEmpty, clientId.utf8.count <= 200 else { throw ServiceError(AccountError(code: .applicationNotFound)) }
        let entry = record("oidc.application_revoked", accountId: accountId, actor: .account, clientId: clientId, at: now)
        guard let ended = try await stored({ () async throws(IdentityStorageError) in
            try await storage.revokeOpenIDClient(accountId: accountId, clientId: clientId, audit: [entry])
        }) else {
            throw ServiceError(AccountError(code: .applicationNotFound))
        }
        logger.info("application revoked by the owner", metadata: ["konto.account_id": "\(accountId)", "konto.client_id": "\(clientId)"])
        return IdentityApplicationRevoked(grantsEnded: ended)
    }
}

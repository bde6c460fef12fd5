import Foundation
import KontoContracts
import KontoModel
import OpenAPIRuntime

extension GatewayAPI {
    /// The owner's copy of their data (docs/API.md, "A copy of your data").
    func exportAccount(_ input: Operations.ExportAccount.Input) async throws -> Operations.ExportAccount.Output {
        let export = try await accountExport(currentPassword: nil)
        return .ok(.init(headers: .init(contentDisposition: Self.exportDisposition(export.exportedAt)), body: .json(export)))
    }

    /// `attachment`, so a browser saves it: `konto-account-<date>.json`.
    static func exportDisposition(_ date: Date) -> String {
        let day = date.formatted(Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day())
        return "attachment; filename=\"konto-account-\(day).json\""
    }

    /// Identity's part first: it checks that the session may (security-related, so a stolen session cannot carry the
    /// account's history off) and records the export; then Profile's details and Notifications' events still kept.
    func accountExport(currentPassword: SecretString?) async throws -> Components.Schemas.AccountExport {
        let (token, session) = try await authenticate()
        let identity = try await upstreams.identity(IdentityContract.exportAccount, IdentitySecuredRequest(token: token, currentPassword: currentPassword))
        let profile: ProfileRecord?
        do {
            profile = try await upstreams.profile(ProfileContract.load, ProfileLoadRequest(accountId: session.accountId))
        } catch {
            // An anonymous account has no details until it signs up.
            guard identity.facts.isAnonymous, error.code == AccountError.Code.notFound else { throw error }
            profile = nil
        }
        let history = try await upstreams.notifications(NotificationsContract.accountHistory, NotificationsAccountHistoryRequest(accountId: session.accountId))
        let facts = identity.facts
        return Components.Schemas.AccountExport(
            exportedAt: Date(),
            account: assembler.account(facts, profile: profile),
            credential: .init(
                accountId: facts.accountId, userId: facts.userId, isAnonymous: facts.isAnonymous, createdAt: identity.createdAt.date,
                hasPassword: identity.hasPassword, disabledAt: identity.disabledAt?.date, lastSignInAt: identity.lastSignInAt?.date
            ),
            verification: .init(
                emailVerified: facts.emailVerified, verifiedAt: identity.verifiedAt?.date, verifiedEmail: facts.verifiedEmail,
                pending: identity.pendingVerifications.map { .init(address: $0.address, expiresAt: $0.expiresAt.date) }
            ),
            mailPreferences: .init(newSignIn: identity.mailPreferences.newSignIn),
            sessions: identity.sessions.map(Self.sessionInfo),
            factors: identity.factors.map(Self.factor),
            identities: identity.identities.map {
                .init(
                    id: $0.id, provider: $0.provider, subject: $0.subject, email: $0.email, emailVerified: $0.emailVerified, createdAt: $0.createdAt.date,
                    lastUsedAt: $0.lastUsedAt?.date
                )
            },
            applications: (identity.applications ?? []).map {
                .init(clientId: $0.clientId, name: $0.name, scopes: $0.scopes, consentedAt: $0.consentedAt?.date, grants: $0.grants, lastUsedAt: $0.lastUsedAt?.date)
            },
            audit: .init(entries: identity.auditEntries.map(Self.auditEntry), complete: identity.auditComplete),
            events: .init(entries: try history.events.map(Self.exportedEvent), complete: history.complete)
        )
    }

    /// An event as its JSON encoding has it, the userIds of a change and a mail's address included (the owner's own),
    /// without the sealed token a reset or a mailed link carries: it is for the courier alone.
    static func exportedEvent(_ event: AccountEvent) throws -> Components.Schemas.ExportedEvent {
        var object = try JSONDecoder().decode(OpenAPIObjectContainer.self, from: JSONEncoder().encode(event))
        for key in ["id", "type", "time", "sealedToken", "sealedCode"] { object.value[key] = nil }
        return .init(id: event.id.uuidString.lowercased(), _type: event.kind.name, time: event.time, additionalProperties: object)
    }
}

import Foundation
import KontoContracts
import KontoModel

extension AuditRecord {
    /// The entries a change's events make, written with them in one transaction: every event but the mail requests
    /// (a mail's cause has its own entry). The actor and client address come from the call's ``AuditScope``.
    static func records(for events: [AccountEvent], scope: AuditScope? = AuditScope.current) -> [AuditRecord] {
        events.compactMap { event in
            guard let (type, facts, personal) = describe(event.kind, operation: scope?.operation) else { return nil }
            let actor = scope?.actor(changing: event.accountId) ?? (.system, nil)
            let allPersonal = (scope?.personal ?? [:]).merging(personal) { _, new in new }
            return AuditRecord(
                occurredAt: Timestamp(event.time), accountId: event.accountId, actorType: actor.type, actorId: actor.id, type: type,
                operation: scope?.operation, facts: facts, personal: allPersonal
            )
        }
    }

    /// The audit type of an event, its facts (never personal) and its personal data.
    private static func describe(_ kind: AccountEvent.Kind, operation: String?) -> (String, [String: String], [String: String])? {
        switch kind {
        case .associatedAccount:
            let opened = ["signUp", "signInAnonymously", "createAccount"].contains(operation)
            return (opened ? "account.created" : "signIn.succeeded", [:], [:])
        case .detailsChanged(let keys):
            return ("details.changed", ["keys": keys.joined(separator: ",")], [:])
        case .disassociatingAccount:
            return ("session.ended", [:], [:])
        case .deletingAccount:
            return ("account.deleted", [:], [:])
        case .passwordResetRequested(let userId, _, _):
            return ("passwordReset.requested", [:], ["userId": userId])
        case .passwordChanged:
            return ("password.changed", [:], [:])
        case .userIdChanged(let previous, let new):
            return ("userId.changed", [:], ["previousUserId": previous, "userId": new])
        case .sessionsRevoked:
            return ("sessions.revoked", [:], [:])
        case .factorAdded(let factorId, let factorType):
            return ("factor.added", ["factorId": factorId, "factorType": factorType], [:])
        case .factorRemoved(let factorId, let factorType, let remaining):
            return ("factor.removed", ["factorId": factorId, "factorType": factorType, "remaining": "\(remaining)"], [:])
        case .recoveryCodeUsed(let remaining):
            return ("recoveryCode.used", ["remaining": "\(remaining)"], [:])
        case .emailVerified:
            return ("email.verified", [:], [:])
        case .identityLinked(let identityId, let provider):
            return ("identity.linked", ["identityId": identityId, "provider": provider], [:])
        case .identityUnlinked(let identityId, let provider):
            return ("identity.unlinked", ["identityId": identityId, "provider": provider], [:])
        case .accountDisabled:
            return ("account.disabled", [:], [:])
        case .accountEnabled:
            return ("account.enabled", [:], [:])
        case .mailRequested:
            return nil
        }
    }

    /// A failed sign-in (or a refused check of a credential): the reason stays internal, the answer is the same for
    /// every reason. `accountId` is nil for an unknown userId (no userId is kept: a mistyped one is someone's address).
    static func failure(_ type: String, accountId: String?, reason: String, at now: Timestamp, scope: AuditScope? = AuditScope.current) -> AuditRecord {
        AuditRecord(
            occurredAt: now, accountId: accountId, actorType: accountId == nil ? .anonymous : .account, actorId: accountId, type: type,
            operation: scope?.operation, facts: ["reason": reason], personal: scope?.personal
        )
    }
}

import Foundation
import KontoContracts
import KontoModel
import Logging

/// An operator's change to an account (docs/ADMIN.md, "Changing an account"): its details (server-owned keys too),
/// its userId and its address verified, applied in that order once everything that can be checked beforehand was.
struct OperatorChanges: IdentityPart {
    let context: IdentityContext
    let storage: any IdentityStorage
    let profile: any ProfileProvider
    let mail: AccountMail

    /// Applies the change. Refused before anything changes: nothing to change (`admin.invalidRequest`), `verified:
    /// false`, a change to an anonymous account, credentials among the details, an invalid or taken userId, no such
    /// account. Then the details go to Profile (its refusals are the answer, nothing else changed); a new userId ends
    /// every session (the owner signs in with it), the previous address is told and the new one is mailed its link
    /// unless `verified` is given too; `verified` records the address as verified (and proven).
    func updateAccount(_ request: IdentityUpdateAccountRequest) async throws(ServiceError) -> IdentityManagedAccount {
        let now = clock()
        let accountId = request.accountId
        let modifications = request.modifications.flatMap { $0.set.storedValues.isEmpty && $0.remove.isEmpty ? nil : $0 }
        guard request.userId != nil || request.verified != nil || modifications != nil else {
            throw Operators.invalid("Nothing to change: give userId, verified, set or remove.")
        }
        guard request.verified != false else {
            throw Operators.invalid("An address becomes unverified only with a new userId; verified takes true.")
        }
        if request.verified == true, configuration.userIdType != .emailAddress {
            throw Operators.invalid("Where userIds are usernames, the email detail is verified by the link mailed to it.")
        }
        if let fields = modifications?.credentialKeyErrors({ _ in "Change this in its own field, not among the details." }), !fields.isEmpty {
            throw ServiceError(AccountError(code: .validationFailed, fields: fields))
        }
        guard let credential = try await stored({ () async throws(IdentityStorageError) in try await storage.credential(accountId: accountId) }) else {
            throw ServiceError(AccountError(code: .notFound))
        }
        guard let previous = credential.userId else {
            throw Operators.invalid("An anonymous account has no userId or details until it signs up.")
        }
        var newUserId: (userId: String, normalized: String)?
        if let requested = request.userId {
            let userId = UserIdNormalization.trimmed(requested)
            try checkUserId(userId)
            let normalized = UserIdNormalization.normalized(userId, type: configuration.userIdType)
            if userId != previous {
                if normalized != credential.normalizedUserId,
                   try await stored({ () async throws(IdentityStorageError) in try await storage.credential(normalizedUserId: normalized) }) != nil {
                    throw ServiceError(AccountError(code: .credentialsTaken))
                }
                newUserId = (userId, normalized)
            }
        }

        var details: ProfileRecord?
        if let modifications {
            details = try await profileCall { () async throws(ProfileProviderError) in
                try await profile.modify(accountId: accountId, modifications: modifications, expectedVersion: request.expectedVersion)
            }
        }
        var eventIds: [UUID] = []
        if let newUserId {
            let written = WrittenEvents()
            let ended = try await stored { () async throws(IdentityStorageError) in
                try await storage.changeUserId(accountId: accountId, userId: newUserId.userId, normalizedUserId: newUserId.normalized, keeping: nil) { ended in
                    var events = [self.event(accountId, .userIdChanged(previous: previous, new: newUserId.userId), at: now)]
                    if ended > 0 { events.append(self.event(accountId, .sessionsRevoked, at: now)) }
                    // To the previous address: whoever owns it learns that it no longer signs in (a help desk can be
                    // talked into a change; the owner hears of it).
                    if let notice = self.mail.mailEvent(accountId, to: previous, .emailChanged, at: now) { events.append(notice) }
                    return written.record(events)
                }
            }
            eventIds += written.ids ?? []
            if request.verified != true {
                await mail.sendEmailVerification(accountId: accountId, address: newUserId.userId, at: now)
            }
            logger.notice("userId changed by an operator", metadata: ["konto.account_id": "\(accountId)", "konto.sessions_ended": "\(ended)"])
        }
        if request.verified == true {
            let verified = event(accountId, .emailVerified, at: now)
            if try await stored({ () async throws(IdentityStorageError) in try await storage.verifyAddress(accountId: accountId, at: now, events: [verified]) }) {
                eventIds.append(verified.id)
            }
        }
        guard let record = try await stored({ () async throws(IdentityStorageError) in
            try await storage.accountRecord(accountId: accountId, userIdType: configuration.userIdType)
        }) else {
            // Deleted meanwhile.
            throw ServiceError(AccountError(code: .notFound))
        }
        if details == nil {
            details = try await profileCall { () async throws(ProfileProviderError) in try await profile.load(accountId: accountId) }
        }
        guard let details else { throw .identityProfileUnavailable }
        return IdentityManagedAccount(record: record, profile: details, eventIds: eventIds.isEmpty ? nil : eventIds)
    }

    /// A Profile call, its failure as the caller answers it (``ProfileProviderError/serviceError``).
    private func profileCall<T>(_ body: () async throws(ProfileProviderError) -> T) async throws(ServiceError) -> T {
        do {
            return try await body()
        } catch {
            throw error.serviceError
        }
    }
}

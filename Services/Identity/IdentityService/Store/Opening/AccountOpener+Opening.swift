import Foundation
import KontoContracts
import KontoModel
import Logging

extension AccountOpener {
    /// Opens an account, the one way every sign-up takes: a new account's userId is reserved (taken, not usable),
    /// an external identity linked, the details stored in Profile, and then the account activated with its first,
    /// privileged session; from an anonymous session, the same account gets the userId and credential instead (its
    /// accountId and creation kept, every session it had replaced). Then the client is remembered as the owner's and
    /// the verification link mailed (unless the provider vouched for the address).
    ///
    /// A step that fails undoes the ones before: a reservation is dropped (its userId free again at once), a linked
    /// identity removed, a profile made for an upgrade deleted; where Profile may have stored what it did not confirm,
    /// its clean-up is scheduled after ``IdentityOptions/profileCleanupDelay``. Profile's refusal is the caller's answer;
    /// Profile unreachable is the retryable `identity.profileUnavailable`; a userId or identity taken meanwhile
    /// `account.credentialsTaken`.
    func openAccount(_ opening: AccountOpening, at now: Timestamp) async throws(ServiceError) -> IdentityAccountSession {
        let opened = try await open(opening, at: now)
        guard let session = opened.session else { preconditionFailure("A sign-up's opening starts a session") }
        return IdentityAccountSession(session: session, details: assembler.account(opened.facts, profile: opened.profile).details, account: opened.facts)
    }

    /// What ``open(_:at:)`` made: the account's facts, its stored details and its first session, if it starts one.
    struct Opened {
        var credential: StoredCredential
        var facts: IdentityAccountFacts
        var profile: ProfileRecord
        var session: IdentitySession?
    }

    /// ``openAccount(_:at:)``'s steps, with or without a first session (an operator's account has none).
    func open(_ opening: AccountOpening, at now: Timestamp) async throws(ServiceError) -> Opened {
        let upgrading = opening.upgrading
        var credential: StoredCredential
        if let upgrading {
            guard let anonymous = upgrading.account, anonymous.isAnonymous else { throw ServiceError(AccountError(code: .alreadySignedUp)) }
            credential = anonymous
            // A credential change: every session of the anonymous account ends.
            credential.credentialVersion += 1
        } else {
            credential = StoredCredential(accountId: UUID().uuidString.lowercased(), userId: nil, normalizedUserId: nil, passwordHash: nil, createdAt: now)
        }
        let accountId = credential.accountId
        credential.userId = opening.userId
        credential.normalizedUserId = opening.normalizedUserId
        credential.verifiedEmail = nil
        // The upgrade's storage keeps an anonymous account's (absent) verification: a provider's address is mailed.
        let addressVerified = opening.addressVerified && upgrading == nil
        credential.emailVerifiedAt = addressVerified ? now : nil
        var identity: StoredExternalIdentity?
        switch opening.credential {
        case let .password(hash):
            credential.passwordHash = hash
        case .none:
            break
        case let .external(provider, verified, refreshToken):
            identity = newIdentity(provider, verified: verified, refreshToken: refreshToken, accountId: accountId, at: now)
        }

        if upgrading == nil {
            try await stored { () async throws(IdentityStorageError) in try await storage.reserveAccount(credential) }
        }
        if let identity {
            let linked: Bool
            do {
                let events = upgrading == nil ? [] : [event(accountId, .identityLinked(identityId: identity.id, provider: identity.provider), at: now)]
                linked = try await storage.addExternalIdentity(identity, events: events)
            } catch {
                if upgrading == nil { try? await storage.abandonAccount(accountId: accountId, profileCleanupAt: nil) }
                throw Self.error(for: error)
            }
            guard linked else {
                // Another first sign-in of this identity got there first: it signs in there from now on.
                if upgrading == nil { try? await storage.abandonAccount(accountId: accountId, profileCleanupAt: nil) }
                throw ServiceError(AccountError(code: .credentialsTaken, message: "This identity was linked to an account meanwhile: sign in again."))
            }
        }

        let stored: ProfileRecord
        if upgrading == nil {
            do {
                stored = try await profile.create(accountId: accountId, details: opening.details)
            } catch {
                try await abandon(accountId: accountId, after: error)
            }
        } else {
            do {
                // An anonymous account holds no profile: one found here is what an earlier upgrade left when its create
                // answered late but committed. It goes first, or this retry would be refused as profile.alreadyExists.
                _ = try await profile.delete(accountId: accountId)
                stored = try await profile.create(accountId: accountId, details: opening.details)
            } catch {
                await unlink(identity)
                throw error.serviceError
            }
        }

        // An operator's account has no session: its owner signs in themselves.
        let made = opening.startsSession
            ? sessions.makeSession(
                accountId: accountId, credentialVersion: credential.credentialVersion, privileged: true,
                method: identity.map { "provider:\($0.provider)" } ?? "signUp", at: clock()
            ) : nil
        let session = made?.0
        do {
            if upgrading == nil {
                var events = [event(accountId, .associatedAccount, at: now)]
                if let identity { events.append(event(accountId, .identityLinked(identityId: identity.id, provider: identity.provider), at: now)) }
                try await storage.activateAccount(accountId: accountId, session: session, events: events)
            } else {
                guard let session else { preconditionFailure("An upgrade starts a session") }
                try await storage.upgradeAnonymous(
                    accountId: accountId, userId: opening.userId, normalizedUserId: opening.normalizedUserId, passwordHash: credential.passwordHash,
                    session: session, events: [event(accountId, .associatedAccount, at: now)]
                )
            }
        } catch {
            if upgrading == nil {
                // The reservation may be gone (abandoned as stale) or the database away: drop what is left.
                try? await storage.abandonAccount(accountId: accountId, profileCleanupAt: clock().adding(options.profileCleanupDelay))
            } else {
                // Taken in the meantime, or the database away: what was made for it goes.
                await unlink(identity)
                _ = try? await profile.delete(accountId: accountId)
            }
            throw Self.error(for: error)
        }
        // The address that signed up is the owner's: strangers' failures will not lock it out.
        if !opening.clients.isEmpty {
            _ = try? await storage.rememberClients(accountId: accountId, clients: opening.clients, at: now)
        }
        if !addressVerified, opening.mailsVerification {
            await mail.sendSignUpVerification(accountId: accountId, userId: opening.userId, stored: stored, at: now)
        }
        logger.info("account opened", metadata: [
            "konto.account_id": "\(accountId)", "konto.upgraded": "\(upgrading != nil)", "konto.provider": "\(identity?.provider ?? "")",
        ])
        return Opened(
            credential: credential,
            facts: credential.facts(userIdType: configuration.userIdType),
            profile: stored,
            session: made.map { IdentitySession(token: BearerToken($0.1), expiresAt: $0.0.absoluteExpiresAt) }
        )
    }

    /// Undoes an upgrade's link, if it made one.
    func unlink(_ identity: StoredExternalIdentity?) async {
        guard let identity else { return }
        _ = try? await storage.removeExternalIdentity(accountId: identity.accountId, identityId: identity.id, keepingWayIn: false, events: [])
    }

    func newIdentity(_ provider: IdentityProvider, verified: VerifiedIdentity, refreshToken: ProviderTokenBox.RefreshToken?, accountId: String, at now: Timestamp) -> StoredExternalIdentity {
        let id = UUID().uuidString.lowercased()
        return StoredExternalIdentity(
            id: id, accountId: accountId, provider: provider.name, subject: verified.subject, email: verified.email, emailVerified: verified.emailVerified,
            createdAt: now, lastUsedAt: now, sealedRefreshToken: refreshToken.map { providerTokens.seal($0, accountId: accountId, identityId: id) }
        )
    }
}

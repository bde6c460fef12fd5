import Foundation
@testable import IdentityService
import KontoContracts
import KontoModel
import KontoWire
import Testing

/// The owner's copy of what Identity holds about their account (`identity.exportAccount`).
@Suite("Identity: the owner's copy of their data")
struct IdentityStoreExportTests {
    @Test("security-related; every kind of row as metadata (sessions, factors, identities, pending links, mail preferences, audit); never a secret or a digest; recorded account.exported", arguments: IdentityStorageKind.allCases)
    func export(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            var options = IdentityOptions()
            options.privilegedWindow = .seconds(60)
            let fixture = try IdentityFixture(storage: storage, options: options)
            let signedUp = try await fixture.signUp()
            let token = signedUp.session.token
            let phone = try await fixture.store.login(IdentityLoginRequest(
                userId: "leland@stanford.edu", password: SecretString("correct horse battery"), clientAddress: "203.0.113.9", clientName: "Leland's phone"
            ))
            let phoneToken = try #require(phone.accountSession).session.token
            // A TOTP enrolment awaiting its code: its secret is what must never show.
            let enrolment = try await fixture.store.enrollTOTP(IdentitySecuredRequest(token: token))
            _ = try await fixture.store.setMailPreferences(IdentitySetMailPreferencesRequest(token: token, newSignIn: false))
            let identity = StoredExternalIdentity(
                id: "identity-1", accountId: signedUp.accountId, provider: "example", subject: "subject-of-leland", email: "leland@example.com",
                emailVerified: true, createdAt: fixture.clock.now
            )
            #expect(try await storage.addExternalIdentity(identity, events: []))

            // Within the sign-up's window.
            let export = try await fixture.store.exportAccount(IdentitySecuredRequest(token: token))
            #expect(export.facts.accountId == signedUp.accountId && export.facts.userId == "leland@stanford.edu" && export.facts.emailVerified == false)
            #expect(export.hasPassword && export.disabledAt == nil && export.verifiedAt == nil)
            #expect(export.createdAt == fixture.clock.now)
            #expect(export.pendingVerifications.map(\.address) == ["leland@stanford.edu"])
            #expect(export.mailPreferences == IdentityMailPreferences(newSignIn: false))
            #expect(export.sessions.count == 2)
            #expect(export.sessions.first { $0.current == true }?.signInMethod == "signUp")
            let phoneSession = try #require(export.sessions.first { $0.current == false })
            #expect(phoneSession.clientName == "Leland's phone" && phoneSession.clientAddress == "203.0.113.0/24" && phoneSession.signInMethod == "password")
            #expect(export.factors.map(\.type) == ["totp"] && export.factors.first?.pending == true && export.factors.first?.id == enrolment.factorId)
            #expect(export.identities == [IdentityAccountExport.LinkedIdentity(
                id: "identity-1", provider: "example", subject: "subject-of-leland", email: "leland@example.com", emailVerified: true,
                createdAt: fixture.clock.now, lastUsedAt: nil
            )])
            #expect(export.auditComplete)
            let types = export.auditEntries.map(\.type)
            for expected in ["account.exported", "account.created", "signIn.succeeded", "mail.preferencesChanged"] {
                #expect(types.contains(expected), "\(types)")
            }
            #expect(export.auditEntries.allSatisfy { $0.accountId == signedUp.accountId && $0.position != nil })

            // No secret, no digest: the password's hash, a session token, the TOTP secret, the verification token.
            let text = String(decoding: try JSONEncoder().encode(export), as: UTF8.self)
            let credential = try #require(try await storage.credential(accountId: signedUp.accountId))
            let passwordHash = try #require(credential.passwordHash)
            let verificationToken = try await IdentityStoreMailTests.verificationToken(fixture)
            for secret in [passwordHash, "argon2", token.value, phoneToken.value, enrolment.secret.value, verificationToken] {
                #expect(!text.contains(secret), "a secret in the export")
            }

            // The window shut: the password, checked; a wrong one is refused and exports nothing.
            fixture.clock.advance(by: .seconds(61))
            #expect(await identityError { try await fixture.store.exportAccount(IdentitySecuredRequest(token: token)) }?.code == AccountError.Code.reauthenticationRequired)
            #expect(await identityError {
                try await fixture.store.exportAccount(IdentitySecuredRequest(token: phoneToken, currentPassword: SecretString("a guess")))
            }?.code == AccountError.Code.wrongCredentials)
            let again = try await fixture.store.exportAccount(IdentitySecuredRequest(token: phoneToken, currentPassword: SecretString("correct horse battery")))
            #expect(again.sessions.first { $0.current == true }?.clientName == "Leland's phone")
            #expect(try await storage.auditEntries(AuditQuery(accountId: signedUp.accountId, type: "account.exported", limit: 10)).count == 2)
            // Another account's session exports only its own.
            let other = try await fixture.signUp("jane@stanford.edu")
            let theirs = try await fixture.store.exportAccount(IdentitySecuredRequest(token: other.session.token))
            #expect(theirs.facts.accountId == other.accountId && theirs.identities.isEmpty && theirs.sessions.count == 1)
            #expect(theirs.auditEntries.allSatisfy { $0.accountId == other.accountId })
        }
    }

    @Test("the audit entries: the newest 500, newest first, and whether older ones were left out", arguments: IdentityStorageKind.allCases)
    func auditLimit(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try IdentityFixture(storage: storage)
            let signedUp = try await fixture.signUp()
            let filler = (0..<IdentityAccountExport.maximumAuditEntries).map { index in
                AuditRecord(
                    occurredAt: fixture.clock.now, accountId: signedUp.accountId, actorType: .anonymous, actorId: nil, type: "signIn.failed",
                    operation: "login", facts: ["index": "\(index)"], personal: nil
                )
            }
            try await storage.appendAudit(filler)
            let export = try await fixture.store.exportAccount(IdentitySecuredRequest(token: signedUp.session.token))
            #expect(export.auditEntries.count == IdentityAccountExport.maximumAuditEntries)
            #expect(export.auditComplete == false)
            // Newest first: the export's own entry, then the filler from its last.
            #expect(export.auditEntries.first?.type == "account.exported")
            #expect(export.auditEntries.dropFirst().first?.facts["index"] == "\(IdentityAccountExport.maximumAuditEntries - 1)")
            #expect(!export.auditEntries.contains { $0.type == "account.created" })
        }
    }

    @Test("a session that has ended exports nothing")
    func endedSession() async throws {
        let fixture = try IdentityFixture()
        let signedUp = try await fixture.signUp()
        _ = try await fixture.store.logout(IdentitySessionRequest(token: signedUp.session.token))
        #expect(await identityError { try await fixture.store.exportAccount(IdentitySecuredRequest(token: signedUp.session.token)) }?.code == AccountError.Code.unauthenticated)
    }
}

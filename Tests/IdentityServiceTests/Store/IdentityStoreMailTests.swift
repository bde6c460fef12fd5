@testable import IdentityService
import KontoContracts
import KontoModel
import KontoWire
import Testing

/// Identity asks the courier for mail in the same transaction as each change it tells of (`mailRequested`), to the
/// account's address, its secret sealed.
@Suite("Identity: the mail it asks for")
struct IdentityStoreMailTests {
    static func mails(_ fixture: IdentityFixture) async throws -> [(accountId: String, request: MailRequest)] {
        try await fixture.events().compactMap { event in
            if case let .mailRequested(request) = event.kind { return (event.accountId, request) }
            return nil
        }
    }

    @Test("a reset sends the link's token sealed (the same token the reset event carries), then a notice once it is used")
    func reset() async throws {
        let fixture = try IdentityFixture()
        _ = try await fixture.signUp()
        _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "nobody@stanford.edu"))
        #expect(try await Self.mails(fixture).isEmpty)
        _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "Leland@Stanford.edu"))
        let mail = try #require(try await Self.mails(fixture).first)
        #expect(mail.request.message == .passwordReset && mail.request.to == "leland@stanford.edu")
        let sealed = try #require(mail.request.sealedToken)
        let token = try IdentityFixture.seal.open(sealed, accountId: mail.accountId)
        #expect(token == (try await IdentityStoreRecoveryTests.resetToken(fixture)))
        #expect(mail.request.expiresAt.map(Timestamp.init) == fixture.clock.now.adding(.seconds(3_600)))
        _ = try await fixture.store.confirmPasswordReset(IdentityConfirmPasswordResetRequest(token: BearerToken(token), newPassword: SecretString("a fresh password")))
        #expect(try await Self.mails(fixture).map(\.request.message) == [.passwordReset, .passwordChanged])
    }

    @Test("a password change, a new userId (to the previous address) and each second factor added or removed send a notice")
    func notices() async throws {
        let fixture = try IdentityFixture()
        let (signedUp, secret, factorId) = try await IdentityStoreFactorTests.enrolled(fixture)
        // Security operations with a second factor need a session confirmed with it (aal2).
        let strong = try await fixture.store.reauthenticate(IdentityReauthenticateRequest(token: signedUp.session.token, code: IdentityStoreFactorTests.code(secret, fixture, offset: 1)))
        let token = try #require(strong.session?.token)
        _ = try await fixture.store.regenerateRecoveryCodes(IdentitySecuredRequest(token: token))
        _ = try await fixture.store.removeFactor(IdentityRemoveFactorRequest(token: token, factorId: factorId))
        _ = try await fixture.store.changePassword(IdentityChangePasswordRequest(token: token, newPassword: SecretString("another horse battery")))
        _ = try await fixture.store.changeUserId(IdentityChangeUserIdRequest(token: token, userId: "Leland.New@stanford.edu"))
        let mails = try await Self.mails(fixture).map(\.request)
        #expect(mails.map(\.message) == [.factorAdded, .factorAdded, .factorRemoved, .passwordChanged, .emailChanged])
        #expect(mails.map { $0.values["factorType"] } == ["totp", "recoveryCodes", "totp", nil, nil])
        #expect(mails.map(\.to) == Array(repeating: "leland@stanford.edu", count: 5))
        #expect(mails.allSatisfy { $0.sealedToken == nil })
    }

    @Test("with usernames, no account has an address: no mail is asked for")
    func usernames() async throws {
        let configuration = try AccountConfiguration(userIdType: .username, keys: AccountConfiguration.default.keys)
        let fixture = try IdentityFixture(configuration: configuration)
        let signedUp = try await fixture.signUp("leland")
        _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "leland"))
        _ = try await fixture.store.changePassword(IdentityChangePasswordRequest(token: signedUp.session.token, currentPassword: SecretString("correct horse battery"), newPassword: SecretString("another horse battery")))
        #expect(try await fixture.events().contains { $0.kind.name == "passwordChanged" })
        #expect(try await Self.mails(fixture).isEmpty)
    }
}

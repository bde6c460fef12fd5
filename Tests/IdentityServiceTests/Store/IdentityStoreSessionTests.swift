@testable import IdentityService
import KontoContracts
import KontoModel
import Testing

@Suite("Identity: sessions and security-related operations")
struct IdentityStoreSessionTests {
    static func token(_ session: IdentityAccountSession) -> BearerToken { session.session.token }

    @Test("a session stored only as its SHA-256; the token is 256 random bits")
    func tokenStorage() async throws {
        let fixture = try IdentityFixture()
        let signedUp = try await fixture.signUp()
        let token = Self.token(signedUp).value
        #expect(token.utf8.count == 43)
        let session = try #require(try await fixture.storage.session(tokenHash: SecretToken.hash(token)))
        #expect(session.tokenHash.count == 32)
        #expect(session.tokenHash != Array(token.utf8))
        #expect(try await fixture.storage.session(tokenHash: Array(token.utf8)) == nil)
    }

    @Test("an expired session (idle or absolute) and a revoked one both fail validation, the same way")
    func expiredAndRevoked() async throws {
        var options = IdentityOptions()
        options.sessionIdleTimeout = .seconds(600)
        options.sessionLifetime = .seconds(3_600)
        options.sessionTouchInterval = .seconds(60)
        let fixture = try IdentityFixture(options: options)
        let first = try await fixture.signUp()
        // Used every 5 minutes, the idle expiry slides, but the absolute one holds.
        for _ in 0..<11 {
            fixture.clock.advance(by: .seconds(300))
            _ = try await fixture.validate(Self.token(first))
        }
        fixture.clock.advance(by: .seconds(300))
        let absolute = await identityError { try await fixture.validate(Self.token(first)) }
        #expect(absolute?.code == AccountError.Code.unauthenticated)

        let second = try await fixture.login()
        fixture.clock.advance(by: .seconds(601))
        let idle = await identityError { try await fixture.validate(Self.token(second)) }

        let third = try await fixture.login()
        _ = try await fixture.store.logout(IdentitySessionRequest(token: Self.token(third)))
        let revoked = await identityError { try await fixture.validate(Self.token(third)) }
        let unknown = await identityError { try await fixture.validate(BearerToken("not-a-token")) }
        #expect(idle == absolute)
        #expect(revoked == absolute)
        #expect(unknown == absolute)
    }

    @Test("validation only writes when the idle expiry moves by the touch interval")
    func touchInterval() async throws {
        let fixture = try IdentityFixture()
        let signedUp = try await fixture.signUp()
        let first = try await fixture.validate(Self.token(signedUp))
        fixture.clock.advance(by: .seconds(30))
        #expect(try await fixture.validate(Self.token(signedUp)).expiresAt == first.expiresAt)
        fixture.clock.advance(by: .seconds(31))
        #expect(try await fixture.validate(Self.token(signedUp)).expiresAt.milliseconds == first.expiresAt.milliseconds + 61_000)
    }

    @Test("logout ends one session; logout everywhere ends all of them, with sessionsRevoked")
    func logoutEverywhere() async throws {
        let fixture = try IdentityFixture()
        let a = try await fixture.signUp()
        let b = try await fixture.login()
        let c = try await fixture.login()
        #expect(try await fixture.store.logout(IdentitySessionRequest(token: Self.token(a))).sessionsEnded == 1)
        #expect(try await fixture.store.logoutEverywhere(IdentitySessionRequest(token: Self.token(b))).sessionsEnded == 2)
        for session in [a, b, c] {
            #expect(await identityError { try await fixture.validate(Self.token(session)) }?.code == AccountError.Code.unauthenticated)
        }
        #expect(try await fixture.events().map(\.kind.name).suffix(3) == ["disassociatingAccount", "sessionsRevoked", "disassociatingAccount"])
    }

    @Test("outside the privileged window, delete, changeUserId and changePassword need the password")
    func privilegedWindow() async throws {
        let fixture = try IdentityFixture()
        let session = try await fixture.signUp()
        fixture.clock.advance(by: .seconds(301))
        let token = Self.token(session)
        let required = AccountError.Code.reauthenticationRequired
        #expect(await identityError { try await fixture.store.delete(IdentityDeleteRequest(token: token)) }?.code == required)
        #expect(await identityError { try await fixture.store.changeUserId(IdentityChangeUserIdRequest(token: token, userId: "new@stanford.edu")) }?.code == required)
        #expect(await identityError {
            try await fixture.store.changePassword(IdentityChangePasswordRequest(token: token, newPassword: SecretString("another good password")))
        }?.code == required)
        // A wrong current password is wrong credentials, counted like a failed login.
        #expect(await identityError {
            try await fixture.store.changeUserId(IdentityChangeUserIdRequest(token: token, userId: "new@stanford.edu", currentPassword: SecretString("nope nope nope")))
        }?.code == AccountError.Code.wrongCredentials)
        // The right one works, and so does reauthenticating first, which replaces the session by a fresh one.
        _ = try await fixture.store.changeUserId(IdentityChangeUserIdRequest(token: token, userId: "new@stanford.edu", currentPassword: SecretString("correct horse battery")))
        let privilege = try await fixture.store.reauthenticate(IdentityReauthenticateRequest(token: token, password: SecretString("correct horse battery")))
        #expect(privilege.privilegedUntil == fixture.clock.now.adding(.seconds(300)))
        let fresh = try #require(privilege.session?.token)
        #expect(fresh != token)
        #expect(privilege.session?.expiresAt == session.session.expiresAt, "the sign-in's absolute end is kept")
        #expect(await identityError { try await fixture.validate(token) }?.code == AccountError.Code.unauthenticated, "the presented token stopped")
        #expect(try await fixture.validate(fresh).privilegedUntil != nil)
        _ = try await fixture.store.changePassword(IdentityChangePasswordRequest(token: fresh, newPassword: SecretString("another good password")))
    }

    @Test("a userId change ends every other session and every reset token of the account")
    func changeUserIdEndsOtherSessions() async throws {
        let fixture = try IdentityFixture()
        let current = try await fixture.signUp()
        let other = try await fixture.login()
        _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "leland@stanford.edu"))
        let resetToken = try #require(try await fixture.events().compactMap { event -> String? in
            if case .passwordResetRequested(_, let token, _) = event.kind { try? IdentityFixture.seal.open(token, accountId: event.accountId) } else { nil }
        }.last)
        _ = try await fixture.store.changeUserId(IdentityChangeUserIdRequest(token: Self.token(current), userId: "stanford@stanford.edu"))
        _ = try await fixture.validate(Self.token(current))
        #expect(await identityError { try await fixture.validate(Self.token(other)) }?.code == AccountError.Code.unauthenticated)
        #expect(try await fixture.events().contains { $0.kind == .sessionsRevoked })
        let reset = await identityError {
            try await fixture.store.confirmPasswordReset(IdentityConfirmPasswordResetRequest(token: BearerToken(resetToken), newPassword: SecretString("a fresh password")))
        }
        #expect(reset?.code == AccountError.Code.invalidResetToken)
    }

    @Test("changeUserId to a taken id fails; after a change the old id no longer logs in and the new one does")
    func changeUserId() async throws {
        let fixture = try IdentityFixture()
        let leland = try await fixture.signUp()
        _ = try await fixture.signUp("jane@stanford.edu")
        let taken = await identityError {
            try await fixture.store.changeUserId(IdentityChangeUserIdRequest(token: Self.token(leland), userId: "JANE@stanford.edu"))
        }
        #expect(taken?.code == AccountError.Code.credentialsTaken)
        let invalid = await identityError {
            try await fixture.store.changeUserId(IdentityChangeUserIdRequest(token: Self.token(leland), userId: "   "))
        }
        #expect(invalid?.fields.map(\.key) == ["userId"])
        _ = try await fixture.store.changeUserId(IdentityChangeUserIdRequest(token: Self.token(leland), userId: "stanford@stanford.edu"))
        #expect(try await fixture.validate(Self.token(leland)).account.userId == "stanford@stanford.edu", "the session names the new userId")
        #expect(await identityError { try await fixture.login() }?.code == AccountError.Code.wrongCredentials)
        #expect(try await fixture.login("stanford@stanford.edu").accountId == leland.accountId)
        // The old id is free again.
        _ = try await fixture.signUp("leland@stanford.edu")
        #expect(try await fixture.events().contains { $0.kind == .userIdChanged(previous: "leland@stanford.edu", new: "stanford@stanford.edu") })
    }

    @Test("changing the password ends every other session, keeps this one, and the old password stops working")
    func changePassword() async throws {
        let fixture = try IdentityFixture()
        let current = try await fixture.signUp()
        let other = try await fixture.login()
        let weak = await identityError {
            try await fixture.store.changePassword(IdentityChangePasswordRequest(token: Self.token(current), newPassword: SecretString("short")))
        }
        #expect(weak?.fields.map(\.code) == [.rule("minimalPassword")])
        let ended = try await fixture.store.changePassword(IdentityChangePasswordRequest(token: Self.token(current), newPassword: SecretString("a brand new password")))
        #expect(ended.sessionsEnded == 1)
        _ = try await fixture.validate(Self.token(current))
        #expect(await identityError { try await fixture.validate(Self.token(other)) } != nil)
        #expect(await identityError { try await fixture.login() }?.code == AccountError.Code.wrongCredentials)
        _ = try await fixture.login(password: "a brand new password")
        #expect(try await fixture.events().map(\.kind.name).contains("passwordChanged"))
        #expect(try await fixture.events().map(\.kind.name).contains("sessionsRevoked"))
    }

    @Test("delete records deletingAccount and ends the account; the profile is left to that event's consumer")
    func delete() async throws {
        let fixture = try IdentityFixture()
        let session = try await fixture.signUp()
        let other = try await fixture.login()
        _ = try await fixture.store.delete(IdentityDeleteRequest(token: Self.token(session)))
        #expect(await identityError { try await fixture.login() }?.code == AccountError.Code.wrongCredentials)
        #expect(await identityError { try await fixture.validate(Self.token(other)) }?.code == AccountError.Code.unauthenticated)
        #expect(try await fixture.events().last?.kind == .deletingAccount)
        // One deletion path: Identity does not call Profile itself; Profile consumes the event (DeletionPathTests).
        #expect(fixture.profile.deletes == 0)
        #expect(fixture.profile.profiles[session.accountId] != nil)
        // The repair is scheduled, not due yet.
        #expect(try await fixture.storage.dueProfileCleanups(at: fixture.clock.now, limit: 10).isEmpty)
        // The userId is free for a new account.
        #expect(try await fixture.signUp().accountId != session.accountId)
    }

    @Test("a profile the deletion event did not reach is deleted by the repair after the clean-up delay, even with Profile down meanwhile")
    func deleteRepair() async throws {
        let fixture = try IdentityFixture()
        let session = try await fixture.signUp()
        _ = try await fixture.store.delete(IdentityDeleteRequest(token: Self.token(session)))
        #expect(await fixture.store.runCleanups() == 0)
        #expect(fixture.profile.profiles[session.accountId] != nil)
        fixture.profile.mode = .unavailable
        fixture.clock.advance(by: .seconds(31))
        #expect(await fixture.store.runCleanups() == 0)
        #expect(fixture.profile.profiles[session.accountId] != nil)
        fixture.profile.mode = .normal
        fixture.clock.advance(by: .seconds(31))
        #expect(await fixture.store.runCleanups() == 1)
        #expect(fixture.profile.profiles[session.accountId] == nil)
        // Done: nothing is due any more.
        fixture.clock.advance(by: .seconds(31))
        #expect(await fixture.store.runCleanups() == 0)
    }
}

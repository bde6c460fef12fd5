@testable import IdentityService
import KontoContracts
import KontoModel
import KontoWire
import Testing

@Suite("Identity: password reset and half-made accounts")
struct IdentityStoreRecoveryTests {
    static func resetToken(_ fixture: IdentityFixture) async throws -> String {
        let events = try await fixture.events()
        for event in events.reversed() {
            if case let .passwordResetRequested(_, token, _) = event.kind {
                return try IdentityFixture.seal.open(token, accountId: event.accountId)
            }
        }
        throw WaitTimedOut()
    }

    @Test("a reset request answers the same whether or not the account exists, and only a real one gets a token")
    func resetNoEnumeration() async throws {
        let fixture = try IdentityFixture()
        _ = try await fixture.signUp()
        let known = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "Leland@stanford.edu"))
        let unknown = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "nobody@stanford.edu"))
        #expect(known == unknown)
        let requested = try await fixture.events().filter { $0.kind.name == "passwordResetRequested" }
        #expect(requested.count == 1)
        guard case let .passwordResetRequested(userId, token, expiresAt) = requested.first?.kind else {
            Issue.record("no reset event")
            return
        }
        #expect(userId == "leland@stanford.edu")
        // Sealed for the delivering channel: the event holds no usable token, and only this account's opens it.
        let accountId = try #require(requested.first?.accountId)
        #expect(!token.box.contains(try IdentityFixture.seal.open(token, accountId: accountId)))
        #expect(try IdentityFixture.seal.open(token, accountId: accountId).utf8.count == 43)
        #expect(throws: ResetTokenSealError.self) { try IdentityFixture.seal.open(token, accountId: "another account") }
        #expect(throws: ResetTokenSealError.self) { try ResetTokenSeal(secret: WireSecret("another deployment's secret, 0123456789abcdef")).open(token, accountId: accountId) }
        #expect(Timestamp(expiresAt) == fixture.clock.now.adding(.seconds(3_600)))
    }

    @Test("a reset token works once, ends every session, and the new password logs in")
    func resetOnce() async throws {
        let fixture = try IdentityFixture()
        let session = try await fixture.signUp()
        _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "leland@stanford.edu"))
        let token = BearerToken(try await Self.resetToken(fixture))
        // A weak password does not use the token up.
        let weak = await identityError { try await fixture.store.confirmPasswordReset(IdentityConfirmPasswordResetRequest(token: token, newPassword: SecretString("short"))) }
        #expect(weak?.code == AccountError.Code.validationFailed)
        let ended = try await fixture.store.confirmPasswordReset(IdentityConfirmPasswordResetRequest(token: token, newPassword: SecretString("a fresh password")))
        #expect(ended.sessionsEnded == 1)
        #expect(await identityError { try await fixture.validate(session.session.token) } != nil)
        _ = try await fixture.login(password: "a fresh password")
        let again = await identityError { try await fixture.store.confirmPasswordReset(IdentityConfirmPasswordResetRequest(token: token, newPassword: SecretString("yet another one"))) }
        #expect(again?.code == AccountError.Code.invalidResetToken)
    }

    @Test("a reset ends every other outstanding token; so does a password change")
    func resetEndsOtherTokens() async throws {
        let fixture = try IdentityFixture()
        let session = try await fixture.signUp()
        _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "leland@stanford.edu"))
        let first = BearerToken(try await Self.resetToken(fixture))
        _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "leland@stanford.edu"))
        let second = BearerToken(try await Self.resetToken(fixture))
        #expect(first != second)
        _ = try await fixture.store.confirmPasswordReset(IdentityConfirmPasswordResetRequest(token: first, newPassword: SecretString("a fresh password")))
        let stale = await identityError { try await fixture.store.confirmPasswordReset(IdentityConfirmPasswordResetRequest(token: second, newPassword: SecretString("an attacker's one"))) }
        #expect(stale?.code == AccountError.Code.invalidResetToken)

        let again = try await fixture.login(password: "a fresh password")
        _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "leland@stanford.edu"))
        let outstanding = BearerToken(try await Self.resetToken(fixture))
        _ = try await fixture.store.changePassword(IdentityChangePasswordRequest(
            token: again.session.token, currentPassword: SecretString("a fresh password"), newPassword: SecretString("changed by the owner")
        ))
        let afterChange = await identityError { try await fixture.store.confirmPasswordReset(IdentityConfirmPasswordResetRequest(token: outstanding, newPassword: SecretString("an attacker's one"))) }
        #expect(afterChange?.code == AccountError.Code.invalidResetToken)
        _ = try await fixture.login(password: "changed by the owner")
        _ = session
    }

    @Test("a made-up reset token is refused before any hashing")
    func madeUpTokenCostsNoHash() async throws {
        // One thread, no queue: any hash would have to wait behind the blocker and fail with identity.busy.
        let fixture = try IdentityFixture(hashingThreads: 1, maxQueued: 0)
        _ = try await fixture.signUp()
        let gate = ThreadGate()
        let blocker = Task { try await fixture.hashing.submit { gate.wait() } }
        defer { gate.open(); blocker.cancel() }
        try await waitUntil { fixture.hashing.load == 1 }
        let refused = await identityError {
            try await fixture.store.confirmPasswordReset(IdentityConfirmPasswordResetRequest(token: BearerToken("made-up-token"), newPassword: SecretString("a fresh password")))
        }
        #expect(refused?.code == AccountError.Code.invalidResetToken)
        // A real token does need the pool (busy here): the refusal above really came before the hash.
        _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "leland@stanford.edu"))
        let real = BearerToken(try await Self.resetToken(fixture))
        let busy = await identityError { try await fixture.store.confirmPasswordReset(IdentityConfirmPasswordResetRequest(token: real, newPassword: SecretString("a fresh password"))) }
        #expect(busy?.code == KontoErrorCode.identityBusy)
    }

    @Test("a reset token does not work after it expired")
    func resetExpired() async throws {
        let fixture = try IdentityFixture()
        _ = try await fixture.signUp()
        _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "leland@stanford.edu"))
        let token = BearerToken(try await Self.resetToken(fixture))
        fixture.clock.advance(by: .seconds(3_601))
        let expired = await identityError { try await fixture.store.confirmPasswordReset(IdentityConfirmPasswordResetRequest(token: token, newPassword: SecretString("a fresh password"))) }
        #expect(expired?.code == AccountError.Code.invalidResetToken)
        _ = try await fixture.login()
    }

    @Test("with Profile down, Identity is not ready, and sign-up fails retryably and leaves the userId free and no profile")
    func profileDown() async throws {
        let fixture = try IdentityFixture()
        fixture.profile.mode = .unavailable
        // Not ready while Profile is away: a gateway's readiness (which asks Identity) promises sign-ups work.
        let health = await fixture.store.healthReport()
        #expect(health.status == .notReady)
        #expect(health.checks.contains(.init(name: "profile", status: .notReady, message: "profile is unavailable")))
        #expect(health.checks.contains(.init(name: "storage", status: .ready)))
        let error = await identityError { try await fixture.signUp() }
        #expect(error?.code == KontoErrorCode.identityProfileUnavailable)
        #expect(error?.isRetryable == true)
        #expect(fixture.profile.profiles.isEmpty)
        #expect(try await fixture.events().isEmpty)
        fixture.profile.mode = .normal
        #expect(await fixture.store.healthReport().status == .ready)
        _ = try await fixture.signUp()
    }

    @Test("with Profile answering late after committing, the userId is free at once and the profile is deleted after the delay")
    func profileLate() async throws {
        let fixture = try IdentityFixture()
        fixture.profile.mode = .commitsButAnswersLate
        #expect(await identityError { try await fixture.signUp() }?.code == KontoErrorCode.identityProfileUnavailable)
        let orphan = try #require(fixture.profile.profiles.keys.first)
        #expect(await identityError { try await fixture.login() }?.code == AccountError.Code.wrongCredentials)
        fixture.profile.mode = .normal
        #expect(await fixture.store.runCleanups() == 0)
        fixture.clock.advance(by: .seconds(31))
        #expect(await fixture.store.runCleanups() == 1)
        #expect(fixture.profile.profiles[orphan] == nil)
        let account = try await fixture.signUp()
        #expect(account.accountId != orphan)
    }

    @Test("an anonymous upgrade whose profile create committed but answered late can be retried")
    func upgradeRetryAfterLateProfile() async throws {
        let fixture = try IdentityFixture()
        let anonymous = try await fixture.store.signInAnonymously(IdentityClientRequest())
        let request = IdentitySignUpRequest(
            userId: "leland@stanford.edu",
            password: SecretString("correct horse battery"),
            details: AccountDetails(values: ["name": IdentityFixture.name]),
            anonymousSession: anonymous.session.token
        )
        fixture.profile.mode = .unavailable
        #expect(await identityError { try await fixture.store.signUp(request) }?.code == KontoErrorCode.identityProfileUnavailable)
        // The create that timed out commits after Identity gave up (and after anything it sent to undo it).
        fixture.profile.mode = .normal
        _ = try fixture.profile.create(accountId: anonymous.accountId, details: AccountDetails())
        let upgraded = try await fixture.store.signUp(request)
        #expect(upgraded.accountId == anonymous.accountId)
        #expect(try await fixture.login().accountId == anonymous.accountId)
    }

    @Test("a sign-up whose process died after reserving is abandoned after the stale age, profile included")
    func staleReservation() async throws {
        let fixture = try IdentityFixture()
        let credential = StoredCredential(
            accountId: "dead-process",
            userId: "leland@stanford.edu",
            normalizedUserId: "leland@stanford.edu",
            passwordHash: nil,
            createdAt: fixture.clock.now
        )
        try await fixture.storage.reserveAccount(credential)
        _ = try fixture.profile.create(accountId: "dead-process", details: AccountDetails())
        #expect(await identityError { try await fixture.signUp() }?.code == AccountError.Code.credentialsTaken)
        fixture.clock.advance(by: .seconds(601))
        _ = await fixture.store.runCleanups()
        fixture.clock.advance(by: .seconds(31))
        #expect(await fixture.store.runCleanups() == 1)
        #expect(fixture.profile.profiles.isEmpty)
        _ = try await fixture.signUp()
    }
}

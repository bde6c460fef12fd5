import Foundation
@testable import IdentityService
import KontoContracts
import KontoModel
import KontoWire
import Testing

/// The second factor through Identity's operations: enrolment, the login's challenge, assurance levels, recovery
/// codes, throttling, and what a password reset cannot bypass.
@Suite("Identity: second factors")
struct IdentityStoreFactorTests {
    /// The secret inside an enrolment's otpauth URI, as an authenticator app reads it (base32 of the key bytes).
    static func key(of enrolment: IdentityTOTPEnrolment) throws -> String {
        let base32 = enrolment.secret.value
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var bytes: [UInt8] = []
        var buffer = 0, bits = 0
        for character in base32 {
            let value = try #require(alphabet.firstIndex(of: character))
            buffer = (buffer << 5) | value
            bits += 5
            if bits >= 8 {
                bytes.append(UInt8((buffer >> (bits - 8)) & 0xFF))
                bits -= 8
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The app's code for the fixture's current time, `offset` steps away.
    static func code(_ secret: String, _ fixture: IdentityFixture, offset: Int64 = 0) -> SecretString {
        SecretString(TOTPAuthenticator.code(secret: secret, step: TOTPAuthenticator.step(at: fixture.clock.now) + offset))
    }

    /// Signs up, enrols and confirms a TOTP (within the sign-up's privileged window); the session and the secret.
    /// An account whose owner proved the address and then added an authenticator app (a factor added before the
    /// first proof would end with it).
    static func enrolled(_ fixture: IdentityFixture) async throws -> (IdentityAccountSession, String, String) {
        let signedUp = try await fixture.signUp()
        try await fixture.confirmAddress(signedUp)
        let enrolment = try await fixture.store.enrollTOTP(IdentitySecuredRequest(token: signedUp.session.token))
        let secret = try key(of: enrolment)
        _ = try await fixture.store.confirmTOTP(IdentityConfirmFactorRequest(token: signedUp.session.token, factorId: enrolment.factorId, code: code(secret, fixture)))
        return (signedUp, secret, enrolment.factorId)
    }

    /// An enrolled account with an `aal2` window (reauthenticated with the next step's code) and ten recovery codes.
    static func withRecoveryCodes(_ fixture: IdentityFixture) async throws -> (IdentityAccountSession, String, BearerToken, [String]) {
        let (signedUp, secret, _) = try await enrolled(fixture)
        let strong = try #require(try await fixture.store.reauthenticate(IdentityReauthenticateRequest(token: signedUp.session.token, code: code(secret, fixture, offset: 1))).session?.token)
        let codes = try await fixture.store.regenerateRecoveryCodes(IdentitySecuredRequest(token: strong)).codes.map(\.value)
        return (signedUp, secret, strong, codes)
    }

    @Test("enrolment: pending until a first code confirms it; then a login gives a challenge, not a session")
    func enrolmentAndChallenge() async throws {
        let fixture = try IdentityFixture()
        let signedUp = try await fixture.signUp()
        let enrolment = try await fixture.store.enrollTOTP(IdentitySecuredRequest(token: signedUp.session.token))
        #expect(enrolment.otpauthURI.value.hasPrefix("otpauth://totp/Konto:leland@stanford.edu?"))
        var factors = try await fixture.store.listFactors(IdentitySessionRequest(token: signedUp.session.token)).factors
        #expect(factors.map(\.pending) == [true])
        // Pending: the login still gives a session.
        #expect(try await fixture.loginAnswer().accountSession != nil)
        let secret = try Self.key(of: enrolment)
        let wrong = await identityError {
            try await fixture.store.confirmTOTP(IdentityConfirmFactorRequest(token: signedUp.session.token, factorId: enrolment.factorId, code: SecretString("abcdef")))
        }
        #expect(wrong?.code == AccountError.Code.wrongSecondFactor)
        let unknown = await identityError {
            try await fixture.store.confirmTOTP(IdentityConfirmFactorRequest(token: signedUp.session.token, factorId: "no-such-factor", code: Self.code(secret, fixture)))
        }
        #expect(unknown?.code == .factorNotFound)
        let confirmed = try await fixture.store.confirmTOTP(IdentityConfirmFactorRequest(token: signedUp.session.token, factorId: enrolment.factorId, code: Self.code(secret, fixture)))
        #expect(!confirmed.pending && confirmed.type == "totp")
        factors = try await fixture.store.listFactors(IdentitySessionRequest(token: signedUp.session.token)).factors
        #expect(factors.map(\.pending) == [false])
        #expect(try await fixture.events().contains { $0.kind == .factorAdded(factorId: enrolment.factorId, factorType: "totp") })

        // A stolen password alone gives no session.
        let answer = try await fixture.loginAnswer()
        #expect(answer.accountSession == nil)
        let challenge = try #require(answer.challenge)
        #expect(challenge.factors == ["totp"])
        #expect(challenge.expiresAt == fixture.clock.now.adding(.seconds(300)))
        // The confirming code was used; the next step's code completes the login.
        let replayed = await identityError {
            try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(challenge: challenge.token, code: Self.code(secret, fixture)))
        }
        #expect(replayed?.code == AccountError.Code.wrongSecondFactor)
        let session = try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(challenge: challenge.token, code: Self.code(secret, fixture, offset: 1)))
        let info = try await fixture.validate(session.session.token)
        #expect(info.assuranceLevel == 2)
        #expect(info.privilegedUntil != nil)
        #expect(session.details.storedValues["name"] != nil)
        // The challenge worked once.
        fixture.clock.advance(by: .seconds(30))
        let again = await identityError {
            try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(challenge: challenge.token, code: Self.code(secret, fixture, offset: 1)))
        }
        #expect(again?.code == .invalidChallenge)
    }

    @Test("a challenge expires; an unknown one is refused; a code must be given, one kind at a time")
    func challengeRefusals() async throws {
        let fixture = try IdentityFixture()
        let (_, secret, _) = try await Self.enrolled(fixture)
        let challenge = try #require(try await fixture.loginAnswer().challenge)
        fixture.clock.advance(by: .seconds(301))
        let expired = await identityError {
            try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(challenge: challenge.token, code: Self.code(secret, fixture)))
        }
        #expect(expired?.code == .invalidChallenge)
        let unknown = await identityError {
            try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(challenge: BearerToken("made-up"), code: Self.code(secret, fixture)))
        }
        #expect(unknown?.code == .invalidChallenge)
        let fresh = try #require(try await fixture.loginAnswer().challenge)
        for request in [
            IdentitySecondFactorRequest(challenge: fresh.token),
            IdentitySecondFactorRequest(challenge: fresh.token, code: Self.code(secret, fixture), recoveryCode: SecretString("abcd-efgh-jkmn")),
            IdentitySecondFactorRequest(challenge: fresh.token, code: SecretString(String(repeating: "1", count: 17))),
        ] {
            let refused = await identityError { try await fixture.store.completeSecondFactor(request) }
            #expect(refused?.code == AccountError.Code.validationFailed)
        }
    }

    @Test("wrong codes are throttled per account: after five, even the right code waits")
    func throttling() async throws {
        let fixture = try IdentityFixture()
        let (_, secret, _) = try await Self.enrolled(fixture)
        let first = try #require(try await fixture.loginAnswer().challenge)
        let right = TOTPAuthenticator.code(secret: secret, step: TOTPAuthenticator.step(at: fixture.clock.now) + 1)
        let wrongCode = right == "123456" ? "654321" : "123456"
        for _ in 0..<5 {
            let wrong = await identityError {
                try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(challenge: first.token, code: SecretString(wrongCode)))
            }
            #expect(wrong?.code == AccountError.Code.wrongSecondFactor)
        }
        // A challenge gives five answers; the next challenge finds the account's codes held.
        let challenge = try #require(try await fixture.loginAnswer().challenge)
        let held = await identityError {
            try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(challenge: challenge.token, code: SecretString(right)))
        }
        #expect(held?.code == AccountError.Code.throttled)
        #expect((held?.retryAfterSeconds ?? 0) >= 1)
        fixture.clock.advance(by: .seconds(31))
        // Still within the window ±1 of the new time: the code of the step after the confirming one.
        let session = try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(challenge: challenge.token, code: Self.code(secret, fixture)))
        #expect(try await fixture.validate(session.session.token).assuranceLevel == 2)
    }

    /// The mails Identity asked the courier for about wrong second-factor answers, in order, with their counts.
    static func wrongAnswerMails(_ fixture: IdentityFixture) async throws -> [String] {
        try await fixture.events().compactMap { event in
            guard case let .mailRequested(request) = event.kind, [.secondFactorFailures, .secondFactorLocked].contains(request.message) else { return nil }
            return "\(request.message.rawValue):\(request.values["failures"] ?? "")"
        }
    }

    /// Options that leave the hourly throttle out of the way, so the lock alone decides.
    static var unthrottled: IdentityOptions {
        var options = IdentityOptions()
        options.secondFactorThrottle = ThrottlePolicy(threshold: 1_000, baseDelay: .seconds(1), maximumDelay: .seconds(1), window: .seconds(3_600))
        return options
    }

    /// One answer on a fresh challenge (each challenge takes only a few).
    static func answer(_ fixture: IdentityFixture, code: String? = nil, recoveryCode: String? = nil) async -> Result<IdentityAccountSession, ServiceError> {
        do {
            guard let challenge = try await fixture.loginAnswer().challenge else { return .failure(ServiceError(AccountError(code: .notFound))) }
            return .success(try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(
                challenge: challenge.token, code: code.map(SecretString.init), recoveryCode: recoveryCode.map(SecretString.init)
            )))
        } catch let error as ServiceError {
            return .failure(error)
        } catch {
            return .failure(ServiceError(AccountError(code: .notFound, message: "\(error)")))
        }
    }

    @Test("ten wrong codes in a row lock the authenticator app, also against the right code; the owner is mailed at 3, 10 and 20, never more")
    func lock() async throws {
        let fixture = try IdentityFixture(options: Self.unthrottled)
        let (_, secret, strong, codes) = try await Self.withRecoveryCodes(fixture)
        let right = { Self.code(secret, fixture, offset: 1).value }
        let wrong = { right() == "123456" ? "654321" : "123456" }
        for attempt in 1...10 {
            #expect(await Self.answer(fixture, code: wrong()).failure?.code == AccountError.Code.wrongSecondFactor, "attempt \(attempt)")
            if attempt == 2 { #expect(try await Self.wrongAnswerMails(fixture).isEmpty) }
        }
        #expect(try await Self.wrongAnswerMails(fixture) == ["secondFactorFailures:3", "secondFactorLocked:10"])
        // Locked: the right code is refused unchecked, at login and at reauthentication alike.
        #expect(await Self.answer(fixture, code: right()).failure?.code == AccountError.Code.factorLocked)
        let reauthenticated = await identityError {
            try await fixture.store.reauthenticate(IdentityReauthenticateRequest(token: strong, code: SecretString(right())))
        }
        #expect(reauthenticated?.code == AccountError.Code.factorLocked)
        for _ in 13...25 {
            #expect(await Self.answer(fixture, code: right()).failure?.code == AccountError.Code.factorLocked)
        }
        #expect(try await Self.wrongAnswerMails(fixture) == ["secondFactorFailures:3", "secondFactorLocked:10", "secondFactorFailures:20"])
        // A recovery code still signs in, and opens the app again.
        let recovered = try #require(await Self.answer(fixture, recoveryCode: codes[0]).success)
        #expect(recovered.recoveryCodesRemaining == 9)
        fixture.clock.advance(by: .seconds(30))
        #expect(await Self.answer(fixture, code: right()).success != nil)
        // Counting starts again: two wrong ones mail nothing new.
        for _ in 1...2 { _ = await Self.answer(fixture, code: wrong()) }
        #expect(try await Self.wrongAnswerMails(fixture).count == 3)
    }

    @Test("a right code clears the count (ten in a row, not ten ever); a reset through the mail opens a locked app")
    func lockResets() async throws {
        let fixture = try IdentityFixture(options: Self.unthrottled)
        let (_, secret, _) = try await Self.enrolled(fixture)
        let right = { Self.code(secret, fixture, offset: 1).value }
        let wrong = { right() == "123456" ? "654321" : "123456" }
        for _ in 1...9 { _ = await Self.answer(fixture, code: wrong()) }
        #expect(await Self.answer(fixture, code: right()).success != nil)
        fixture.clock.advance(by: .seconds(30))
        for _ in 1...9 { #expect(await Self.answer(fixture, code: wrong()).failure?.code == AccountError.Code.wrongSecondFactor) }
        #expect(await Self.answer(fixture, code: wrong()).failure?.code == AccountError.Code.wrongSecondFactor)
        #expect(await Self.answer(fixture, code: right()).failure?.code == AccountError.Code.factorLocked)
        _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "leland@stanford.edu"))
        let token = try await IdentityStoreRecoveryTests.resetToken(fixture)
        _ = try await fixture.store.confirmPasswordReset(IdentityConfirmPasswordResetRequest(token: BearerToken(token), newPassword: SecretString("a brand new horse battery")))
        // The requirement stays (a challenge, not a session), and the app's code works again.
        let challenge = try #require(try await fixture.loginAnswer(password: "a brand new horse battery").challenge)
        _ = try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(challenge: challenge.token, code: SecretString(right())))
    }

    @Test("a challenge takes five answers, then it is spent, the right code too")
    func challengeAnswers() async throws {
        let fixture = try IdentityFixture(options: Self.unthrottled)
        let (_, secret, _) = try await Self.enrolled(fixture)
        let right = Self.code(secret, fixture, offset: 1).value
        let challenge = try #require(try await fixture.loginAnswer().challenge)
        for _ in 1...5 {
            let wrong = await identityError {
                try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(challenge: challenge.token, code: SecretString(right == "123456" ? "654321" : "123456")))
            }
            #expect(wrong?.code == AccountError.Code.wrongSecondFactor)
        }
        let spent = await identityError {
            try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(challenge: challenge.token, code: SecretString(right)))
        }
        #expect(spent?.code == AccountError.Code.invalidChallenge)
    }

    /// Real threads answering at once: the count is taken before the check, so no more than ten answers are ever
    /// checked before the lock, however many arrive together, and the lock is mailed once.
    @Test("concurrent wrong answers cannot pass the lock together", arguments: 1...5)
    func lockUnderConcurrency(round: Int) async throws {
        let fixture = try IdentityFixture(options: Self.unthrottled)
        let (_, secret, _) = try await Self.enrolled(fixture)
        let right = Self.code(secret, fixture, offset: 1).value
        let wrong = right == "123456" ? "654321" : "123456"
        let results = await withTaskGroup(of: Result<IdentityAccountSession, ServiceError>.self) { group in
            for _ in 0..<30 { group.addTask { await Self.answer(fixture, code: wrong) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let codes = results.map { $0.failure?.code.rawValue ?? "signed in" }
        #expect(codes.filter { $0 == AccountError.Code.wrongSecondFactor.rawValue }.count == 10, "\(codes)")
        #expect(codes.filter { $0 == AccountError.Code.factorLocked.rawValue }.count == 20, "\(codes)")
        // Each count belongs to one answer, so each mail goes once (in whichever order the answers finished).
        #expect(try await Self.wrongAnswerMails(fixture).sorted() == ["secondFactorFailures:20", "secondFactorFailures:3", "secondFactorLocked:10"])
    }

    @Test("security-related operations need an aal2 window: the password alone is refused, a code reopens it")
    func assurance() async throws {
        let fixture = try IdentityFixture()
        let (signedUp, secret, factorId) = try await Self.enrolled(fixture)
        // The sign-up's session is aal1 (before the factor): with the password it is still refused.
        let refused = await identityError {
            try await fixture.store.changePassword(IdentityChangePasswordRequest(token: signedUp.session.token, currentPassword: SecretString("correct horse battery"), newPassword: SecretString("another horse battery")))
        }
        #expect(refused?.code == .secondFactorRequired)
        let removal = await identityError {
            try await fixture.store.removeFactor(IdentityRemoveFactorRequest(token: signedUp.session.token, factorId: factorId, currentPassword: SecretString("correct horse battery")))
        }
        #expect(removal?.code == .secondFactorRequired)
        // Reauthenticating with the password alone: an aal1 window, still refused.
        let passwordOnly = try await fixture.store.reauthenticate(IdentityReauthenticateRequest(token: signedUp.session.token, password: SecretString("correct horse battery")))
        let token = try #require(passwordOnly.session?.token)
        #expect(try await fixture.validate(token).assuranceLevel == 1)
        let stillRefused = await identityError {
            try await fixture.store.regenerateRecoveryCodes(IdentitySecuredRequest(token: token))
        }
        #expect(stillRefused?.code == .secondFactorRequired)
        // With a code: aal2, and the operations go through.
        let withCode = try await fixture.store.reauthenticate(IdentityReauthenticateRequest(token: token, code: Self.code(secret, fixture, offset: 1)))
        let strong = try #require(withCode.session?.token)
        #expect(try await fixture.validate(strong).assuranceLevel == 2)
        let codes = try await fixture.store.regenerateRecoveryCodes(IdentitySecuredRequest(token: strong))
        #expect(codes.codes.count == 10)
        let removed = try await fixture.store.removeFactor(IdentityRemoveFactorRequest(token: strong, factorId: factorId))
        // The last second factor is allowed to go, and the answer says so.
        #expect(removed.remainingFactors == 0)
        #expect(try await fixture.events().contains { $0.kind == .factorRemoved(factorId: factorId, factorType: "totp", remaining: 0) })
        #expect(try await fixture.loginAnswer().accountSession != nil)
        let gone = await identityError { try await fixture.store.removeFactor(IdentityRemoveFactorRequest(token: strong, factorId: factorId)) }
        #expect(gone?.code == .factorNotFound)
    }

    @Test("recovery codes: each signs in once, the event and the answer say how many are left")
    func recoveryCodes() async throws {
        let fixture = try IdentityFixture()
        let (_, _, _, codes) = try await Self.withRecoveryCodes(fixture)
        let challenge = try #require(try await fixture.loginAnswer().challenge)
        #expect(challenge.factors == ["totp", "recoveryCode"])
        let session = try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(challenge: challenge.token, recoveryCode: SecretString(codes[3].uppercased())))
        #expect(session.recoveryCodesRemaining == 9)
        #expect(try await fixture.events().last { $0.kind.name == "recoveryCodeUsed" }?.kind == .recoveryCodeUsed(remaining: 9))
        let second = try #require(try await fixture.loginAnswer().challenge)
        let reused = await identityError {
            try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(challenge: second.token, recoveryCode: SecretString(codes[3])))
        }
        #expect(reused?.code == AccountError.Code.wrongSecondFactor)
        // Regenerating replaces them all: an old unused code stops working.
        let fresh = try await fixture.store.regenerateRecoveryCodes(IdentitySecuredRequest(token: session.session.token)).codes.map(\.value)
        let old = await identityError {
            try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(challenge: second.token, recoveryCode: SecretString(codes[4])))
        }
        #expect(old?.code == AccountError.Code.wrongSecondFactor)
        _ = try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(challenge: second.token, recoveryCode: SecretString(fresh[0])))
    }

    @Test("recovery codes are stored keyed and bound to the account; codes stored before as plain SHA-256 still work once")
    func keyedRecoveryCodes() async throws {
        let fixture = try IdentityFixture()
        let (signedUp, _, _, codes) = try await Self.withRecoveryCodes(fixture)
        let accountId = signedUp.accountId
        // Neither the plain hash nor another deployment's digest finds a code (a miss uses nothing).
        #expect(try await fixture.storage.useRecoveryCode(accountId: accountId, codeHash: RecoveryCodes.legacyHash(codes[0]), at: fixture.clock.now) { _ in [] } == nil)
        let other = FactorSecretBox(secret: WireSecret("another deployment's data key, 32+ bytes"))
        #expect(try await fixture.storage.useRecoveryCode(accountId: accountId, codeHash: other.recoveryCodeDigest(codes[0], accountId: accountId), at: fixture.clock.now) { _ in [] } == nil)
        // Bound to the account: the same code digests otherwise for another.
        #expect(IdentityFixture.factorSecrets.recoveryCodeDigest(codes[0], accountId: accountId) != IdentityFixture.factorSecrets.recoveryCodeDigest(codes[0], accountId: "another"))
        #expect(await Self.answer(fixture, recoveryCode: codes[0]).success?.recoveryCodesRemaining == 9)

        // A set made before the keyed digest (plain SHA-256), as an upgraded deployment has it.
        let old = "abcd-efgh-jkmn"
        try await fixture.storage.replaceRecoveryCodes(
            StoredFactor(id: "old-codes", accountId: accountId, kind: .recoveryCodes, name: "Recovery codes", confirmed: true, createdAt: fixture.clock.now),
            codeHashes: [RecoveryCodes.legacyHash(old), RecoveryCodes.legacyHash("pqrs-tuvw-xyz0")], events: []
        )
        #expect(await Self.answer(fixture, recoveryCode: old.uppercased()).success?.recoveryCodesRemaining == 1)
        #expect(await Self.answer(fixture, recoveryCode: old).failure?.code == AccountError.Code.wrongSecondFactor)
    }

    @Test("a password reset never bypasses the second factor: the next login still asks for it")
    func resetKeepsSecondFactor() async throws {
        let fixture = try IdentityFixture()
        let (signedUp, _, _) = try await Self.enrolled(fixture)
        _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "leland@stanford.edu"))
        let token = try await IdentityStoreRecoveryTests.resetToken(fixture)
        _ = try await fixture.store.confirmPasswordReset(IdentityConfirmPasswordResetRequest(token: BearerToken(token), newPassword: SecretString("a brand new horse battery")))
        let answer = try await fixture.loginAnswer(password: "a brand new horse battery")
        #expect(answer.accountSession == nil)
        #expect(answer.challenge != nil)
        // The reset ended every session, the signed-up one too.
        #expect(await identityError { try await fixture.validate(signedUp.session.token) }?.code == AccountError.Code.unauthenticated)
    }

    @Test("an anonymous account has no second factors: its session is never privileged, and it has no password")
    func anonymous() async throws {
        let fixture = try IdentityFixture()
        let guest = try await fixture.store.signInAnonymously(IdentityClientRequest())
        let refused = await identityError { try await fixture.store.enrollTOTP(IdentitySecuredRequest(token: guest.session.token)) }
        #expect(refused?.code == AccountError.Code.reauthenticationRequired)
        let withPassword = await identityError {
            try await fixture.store.regenerateRecoveryCodes(IdentitySecuredRequest(token: guest.session.token, currentPassword: SecretString("any password at all")))
        }
        #expect(withPassword?.code == AccountError.Code.wrongCredentials)
    }
}

extension Result {
    var failure: Failure? {
        if case let .failure(error) = self { return error }
        return nil
    }

    var success: Success? {
        if case let .success(value) = self { return value }
        return nil
    }
}

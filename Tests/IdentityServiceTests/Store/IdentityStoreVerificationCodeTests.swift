import Foundation
@testable import IdentityService
import KontoContracts
import KontoModel
import KontoWire
import Testing

/// The code a verification mail carries beside its link (issue 70, 1): the app that signed up confirms the address with
/// it and its session, and the owner keeps everything; the link with a session does the same, the link without one
/// ends what the account had (docs/IDENTITY.md, "Pre-hijacked accounts").
@Suite("Identity: verification by code, and the owner's proofs")
struct IdentityStoreVerificationCodeTests {
    /// The code (and the link's token) of the last verification mail asked for `accountId`.
    static func mailed(_ fixture: IdentityFixture, _ accountId: String) async throws -> (token: String, code: String) {
        for event in try await fixture.events().reversed() where event.accountId == accountId {
            if case let .mailRequested(request) = event.kind, request.message == .verifyEmail {
                let token = try IdentityFixture.seal.open(try #require(request.sealedToken), accountId: accountId)
                let code = try IdentityFixture.seal.open(try #require(request.sealedCode, "the mail carries a code"), accountId: accountId)
                return (token, code)
            }
        }
        throw ServiceError(AccountError(code: .notFound, message: "no verification mail"))
    }

    static func confirm(_ fixture: IdentityFixture, _ session: BearerToken, _ code: String) async throws -> IdentityEmailVerified {
        try await fixture.store.confirmEmailVerificationCode(IdentityConfirmEmailVerificationCodeRequest(token: session, code: SecretString(code)))
    }

    @Test("the app's sign-up: the mailed code with the account's session verifies the address, once, and ends nothing (the other session, the password and a factor stay); the link goes with it", arguments: IdentityStorageKind.allCases)
    func appJourney(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try IdentityFixture(storage: storage)
            let signedUp = try await fixture.signUp("ada@example.org")
            let other = try await fixture.login("ada@example.org")
            let (token, code) = try await Self.mailed(fixture, signedUp.accountId)
            #expect(EmailCode.isWellFormed(code))
            // An authenticator app added before the proof (within the sign-up's window).
            let enrolment = try await fixture.store.enrollTOTP(IdentitySecuredRequest(token: signedUp.session.token))
            let secret = try IdentityStoreFactorTests.key(of: enrolment)
            _ = try await fixture.store.confirmTOTP(IdentityConfirmFactorRequest(token: signedUp.session.token, factorId: enrolment.factorId, code: IdentityStoreFactorTests.code(secret, fixture)))
            // A first proof that ended things would end sessions made before it (those made in the same instant not).
            fixture.clock.advance(by: .seconds(1))
            // Stored only as a keyed digest: no column of the row holds the code (nor the token) in clear.
            let verified = try await Self.confirm(fixture, signedUp.session.token, code)
            #expect(verified.accountId == signedUp.accountId)
            #expect(try await fixture.storage.credential(accountId: signedUp.accountId)?.emailVerifiedAt == fixture.clock.now)
            #expect(try await fixture.events().contains { $0.accountId == signedUp.accountId && $0.kind == .emailVerified })
            // The owner's first proof: the confirming session, the other one, the factor and the password all stay (the
            // password now leads to the factor's challenge), and no mail says something was removed.
            #expect(try await fixture.validate(signedUp.session.token).accountId == signedUp.accountId)
            #expect(try await fixture.validate(other.session.token).accountId == signedUp.accountId)
            #expect(try await fixture.storage.factors(accountId: signedUp.accountId).count == 1)
            let answer = try await fixture.loginAnswer("ada@example.org")
            #expect(answer.challenge != nil && answer.accountSession == nil, "the factor is gone: the password alone signed in")
            #expect(try await !fixture.events().contains { event in
                if case let .mailRequested(request) = event.kind { return request.message == .accessSecured }
                return false
            })
            // Once; and the link of the same mail is used up with it.
            #expect(await identityError { try await Self.confirm(fixture, signedUp.session.token, code) }?.code == .invalidVerificationToken)
            #expect(await identityError {
                try await fixture.store.confirmEmailVerification(IdentityConfirmEmailVerificationRequest(token: BearerToken(token)))
            }?.code == .invalidVerificationToken)
        }
    }

    @Test("the link: with the account's session the owner's proof (nothing ends); with a session that is not valid or another account's, refused and the token left unused; without a session, the first proof ends the password, sessions and factors", arguments: IdentityStorageKind.allCases)
    func link(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try IdentityFixture(storage: storage)
            // The owner signed up in the app; the browser signed in with the password to confirm.
            let owner = try await fixture.signUp("olga@example.org")
            let eve = try await fixture.signUp("eve@example.org")
            let (token, _) = try await Self.mailed(fixture, owner.accountId)
            fixture.clock.advance(by: .seconds(1))
            let browser = try await fixture.login("olga@example.org")
            func confirm(_ session: BearerToken?) async throws -> IdentityEmailVerified {
                try await fixture.store.confirmEmailVerification(IdentityConfirmEmailVerificationRequest(token: BearerToken(token), session: session))
            }
            // A session that is not valid (ended, made up) is refused: the token is not taken for a proof without one.
            _ = try await fixture.store.logout(IdentitySessionRequest(token: browser.session.token))
            #expect(await identityError { try await confirm(browser.session.token) }?.code == .unauthenticated)
            #expect(await identityError { try await confirm(BearerToken("bm90LWEtc2Vzc2lvbi1ub3QtYS1zZXNzaW9uLW5vdC1hLXNlc3Npb24")) }?.code == .unauthenticated)
            // Another account's session: the token is not that account's, and stays.
            #expect(await identityError { try await confirm(eve.session.token) }?.code == .invalidVerificationToken)
            #expect(try await fixture.storage.credential(accountId: owner.accountId)?.emailVerifiedAt == nil)
            #expect(try await fixture.storage.credential(accountId: eve.accountId)?.emailVerifiedAt == nil)
            // Still unused: the owner's session confirms, and everything stays.
            let signedIn = try await fixture.login("olga@example.org")
            #expect(try await confirm(signedIn.session.token).accountId == owner.accountId)
            #expect(try await fixture.validate(owner.session.token).accountId == owner.accountId, "the app's session stays")
            #expect(try await fixture.validate(signedIn.session.token).accountId == owner.accountId)
            #expect(try await fixture.login("olga@example.org").accountId == owner.accountId)
            #expect(await identityError { try await confirm(signedIn.session.token) }?.code == .invalidVerificationToken, "once")

            // Without a session ("I did not create this account"): the squatter's password and sessions end.
            let squatted = try await fixture.signUp("nora@example.org")
            let (squatToken, _) = try await Self.mailed(fixture, squatted.accountId)
            fixture.clock.advance(by: .seconds(1))
            _ = try await fixture.store.confirmEmailVerification(IdentityConfirmEmailVerificationRequest(token: BearerToken(squatToken)))
            #expect(await identityError { try await fixture.validate(squatted.session.token) }?.code == .unauthenticated)
            #expect(await identityError { try await fixture.login("nora@example.org") }?.code == .wrongCredentials)
        }
    }

    @Test("refusals: another account's session, a malformed code (not counted), an expired code, no session; ten tries an hour per account, counted before the check", arguments: IdentityStorageKind.allCases)
    func refusals(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try IdentityFixture(storage: storage)
            let ada = try await fixture.signUp("ada@example.org")
            let eve = try await fixture.signUp("eve@example.org")
            let (_, code) = try await Self.mailed(fixture, ada.accountId)
            // Bound to the account: Ada's code is nothing to Eve's session (and counts against Eve).
            #expect(await identityError { try await Self.confirm(fixture, eve.session.token, code) }?.code == .invalidVerificationToken)
            #expect(try await fixture.storage.credential(accountId: eve.accountId)?.emailVerifiedAt == nil)
            for malformed in ["", "1234567", "123456789", "abcdefgh", "１２３４５６７８", String(repeating: "1", count: 5_000)] {
                #expect(await identityError { try await Self.confirm(fixture, ada.session.token, malformed) }?.code == .validationFailed, "\(malformed.prefix(10))")
            }
            #expect(await identityError {
                try await Self.confirm(fixture, BearerToken("bm90LWEtc2Vzc2lvbi1ub3QtYS1zZXNzaW9uLW5vdC1hLXNlc3Npb24"), code)
            }?.code == .unauthenticated)
            // Nine wrong codes (the malformed ones were not counted), then the right one is the tenth try.
            let wrong = code == "00000000" ? "00000001" : "00000000"
            for _ in 0..<9 {
                #expect(await identityError { try await Self.confirm(fixture, ada.session.token, wrong) }?.code == .invalidVerificationToken)
            }
            #expect(try await Self.confirm(fixture, ada.session.token, code).accountId == ada.accountId)
            // Beyond the allowance nothing is checked, a right code neither, until the hour has passed.
            _ = try await fixture.store.changeUserId(IdentityChangeUserIdRequest(token: ada.session.token, userId: "ada.new@example.org"))
            let (_, second) = try await Self.mailed(fixture, ada.accountId)
            let held = await identityError { try await Self.confirm(fixture, ada.session.token, second) }
            #expect(held?.code == .throttled)
            fixture.clock.advance(by: .seconds(3_601))
            // Past its lifetime a code is refused (the hour above is within it; a day is not).
            fixture.clock.advance(by: .seconds(86_400))
            #expect(await identityError { try await Self.confirm(fixture, ada.session.token, second) }?.code == .invalidVerificationToken)
        }
    }

    @Test("concurrent confirmations with one code from many threads: one verifies, the rest are refused; every round", arguments: IdentityStorageKind.allCases)
    func race(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            var options = IdentityOptions()
            options.verificationCodeAttemptsPerHour = 1_000
            let fixture = try IdentityFixture(storage: storage, options: options)
            for round in 0..<8 {
                let signedUp = try await fixture.signUp("racer\(round)@example.org")
                let (_, code) = try await Self.mailed(fixture, signedUp.accountId)
                let outcomes = await withTaskGroup(of: Bool.self) { group in
                    for _ in 0..<8 {
                        group.addTask { await identityError { try await Self.confirm(fixture, signedUp.session.token, code) } == nil }
                    }
                    return await group.reduce(into: [Bool]()) { $0.append($1) }
                }
                #expect(outcomes.filter { $0 }.count == 1, "round \(round): \(outcomes)")
                let verified = try await fixture.events().filter { $0.accountId == signedUp.accountId && $0.kind == .emailVerified }
                #expect(verified.count == 1)
            }
        }
    }

    @Test("a burst of wrong codes from many threads takes no more tries than the allowance", arguments: IdentityStorageKind.allCases)
    func burst(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try IdentityFixture(storage: storage)
            let signedUp = try await fixture.signUp("burst@example.org")
            let (_, code) = try await Self.mailed(fixture, signedUp.accountId)
            let guesses = (0..<40).map { String(format: "%08d", $0) }.filter { $0 != code }.prefix(30)
            let errors = await withTaskGroup(of: ServiceError?.self) { group in
                for guess in guesses {
                    group.addTask { await identityError { try await Self.confirm(fixture, signedUp.session.token, guess) } }
                }
                return await group.reduce(into: [ServiceError?]()) { $0.append($1) }
            }
            #expect(errors.filter { $0?.code == .invalidVerificationToken }.count == 10, "\(errors.map { $0?.code.rawValue ?? "none" })")
            #expect(errors.filter { $0?.code == .throttled }.count == guesses.count - 10)
        }
    }
}

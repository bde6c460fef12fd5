@testable import IdentityService
import KontoContracts
import KontoModel
import KontoWire
import Testing

/// Sign-in by a code mailed to the userId, through Identity's operations.
@Suite("Identity: sign-in by emailed code")
struct IdentityStoreEmailCodeTests {
    static func fixture(_ change: (inout IdentityOptions) -> Void = { _ in }, configuration: AccountConfiguration = .default) throws -> IdentityFixture {
        var options = IdentityOptions()
        options.emailCodeLogin = true
        change(&options)
        return try IdentityFixture(configuration: configuration, options: options)
    }

    /// Asks for a code and waits for the part of the request that runs after its answer.
    static func request(_ fixture: IdentityFixture, _ userId: String = "leland@stanford.edu", address: String? = "198.51.100.7", device: String? = nil) async throws {
        _ = try await fixture.store.requestEmailCode(IdentityEmailCodeRequest(userId: userId, clientAddress: address, clientDevice: device))
        await fixture.store.pendingWork.finish()
    }

    /// The sign-in code mails in the outbox, opened as the courier opens them.
    static func codes(_ fixture: IdentityFixture) async throws -> [(to: String, code: String, request: MailRequest)] {
        try await fixture.events().compactMap { event in
            guard case let .mailRequested(request) = event.kind, request.message == .signInCode, let sealed = request.sealedToken else { return nil }
            return (request.to, try IdentityFixture.seal.open(sealed, accountId: event.accountId), request)
        }
    }

    static func login(_ fixture: IdentityFixture, _ code: String, _ userId: String = "leland@stanford.edu", address: String? = "198.51.100.7") async throws -> IdentityLoginAnswer {
        try await fixture.store.emailCodeLogin(IdentityEmailCodeLoginRequest(userId: userId, code: SecretString(code), clientAddress: address))
    }

    @Test("off unless the deployment offers it: both steps answer account.notFound and nothing is mailed")
    func off() async throws {
        let fixture = try IdentityFixture()
        _ = try await fixture.signUp()
        let asked = await identityError { try await fixture.store.requestEmailCode(IdentityEmailCodeRequest(userId: "leland@stanford.edu")) }
        let used = await identityError { try await Self.login(fixture, "12345678") }
        #expect(asked?.code == .notFound && used?.code == .notFound)
        await fixture.store.pendingWork.finish()
        #expect(try await Self.codes(fixture).isEmpty)
    }

    @Test("a code mailed to the userId signs in once: an unprivileged session, the address verified; the same answer for an unknown userId, a wrong, used or expired code")
    func signIn() async throws {
        let fixture = try Self.fixture()
        let signedUp = try await fixture.signUp("Leland@Stanford.edu")
        try await Self.request(fixture, "leland@stanford.edu")
        try await Self.request(fixture, "nobody@stanford.edu")
        let mails = try await Self.codes(fixture)
        #expect(mails.count == 1, "nothing for an unknown userId")
        let mail = try #require(mails.first)
        #expect(mail.to == "Leland@Stanford.edu" && mail.code.count == 8 && mail.code.allSatisfy(\.isNumber))
        #expect(mail.request.expiresAt.map(Timestamp.init) == fixture.clock.now.adding(.seconds(600)))
        #expect(try await fixture.storage.credential(accountId: signedUp.accountId)?.emailVerifiedAt == nil)

        let wrong = mail.code == "00000000" ? "00000001" : "00000000"
        let unknown = await identityError { try await Self.login(fixture, mail.code, "nobody@stanford.edu") }
        let mistyped = await identityError { try await Self.login(fixture, wrong) }
        #expect(unknown?.code == .wrongCredentials && unknown == mistyped)

        let answer = try await Self.login(fixture, mail.code, "LELAND@stanford.edu")
        let session = try #require(answer.accountSession)
        #expect(session.accountId == signedUp.accountId)
        #expect(session.details[\.emailVerified] == true)
        let info = try await fixture.validate(session.session.token)
        #expect(info.privilegedUntil == nil, "a mailbox is not the password")
        #expect(info.account.emailVerified == true)
        #expect(try await fixture.events().contains { $0.accountId == signedUp.accountId && $0.kind == .emailVerified })
        let reused = await identityError { try await Self.login(fixture, mail.code) }
        #expect(reused == mistyped)

        // Expired after ten minutes.
        try await Self.request(fixture)
        let late = try #require(try await Self.codes(fixture).last).code
        fixture.clock.advance(by: .seconds(601))
        let expired = await identityError { try await Self.login(fixture, late) }
        #expect(expired == mistyped)
    }

    @Test("a code that is not 8 digits or an over-long userId is refused as such, without counting as a guess")
    func malformed() async throws {
        let fixture = try Self.fixture { $0.throttle = ThrottlePolicy(threshold: 1, baseDelay: .seconds(60)) }
        _ = try await fixture.signUp()
        for code in ["1234567", "123456789", "1234567a", "١٢٣٤٥٦٧٨", ""] {
            let error = await identityError { try await Self.login(fixture, code) }
            #expect(error?.code == .validationFailed && error?.fields.first?.key == "code", "\(code)")
        }
        let long = await identityError { try await Self.login(fixture, "12345678", String(repeating: "a", count: 2_000) + "@stanford.edu") }
        #expect(long?.code == .validationFailed)
        let malformedUserId = await identityError { try await fixture.store.requestEmailCode(IdentityEmailCodeRequest(userId: "not an address")) }
        #expect(malformedUserId?.code == .validationFailed)
        // Nothing counted: a real code still works at a threshold of one.
        try await Self.request(fixture)
        let code = try #require(try await Self.codes(fixture).last).code
        #expect(try await Self.login(fixture, code).accountSession != nil)
    }

    @Test("wrong codes are throttled per userId and address as failed logins; a client that signed in before is not held by strangers' guesses")
    func throttled() async throws {
        let fixture = try Self.fixture { $0.throttle = ThrottlePolicy(threshold: 3, baseDelay: .seconds(60)) }
        _ = try await fixture.signUp()
        // The owner's client signed in before.
        _ = try await fixture.login(address: "192.0.2.1")
        for attempt in 0..<3 {
            let error = await identityError { try await Self.login(fixture, "0000000\(attempt)", address: "203.0.113.\(attempt)") }
            #expect(error?.code == .wrongCredentials)
        }
        let held = await identityError { try await Self.login(fixture, "99999999", address: "203.0.113.9") }
        #expect(held?.code == .throttled && (held?.retryAfterSeconds ?? 0) > 0)
        // The owner asks for a code and signs in with it from the known client.
        try await Self.request(fixture, address: "192.0.2.1")
        let code = try #require(try await Self.codes(fixture).last).code
        #expect(try await Self.login(fixture, code, address: "192.0.2.1").accountSession != nil)
        // An address asking too often is held too (its code requests count).
        var requests = 0
        while await identityError({ try await fixture.store.requestEmailCode(IdentityEmailCodeRequest(userId: "x\(requests)@stanford.edu", clientAddress: "203.0.113.50")) })?.code != .throttled {
            requests += 1
            try #require(requests < 10)
        }
        #expect(requests == 3)
    }

    @Test("mails are limited per hour: unknown clients together, and each known client on its own; older codes stay valid")
    func allowance() async throws {
        let fixture = try Self.fixture { $0.emailCodeMailsPerHour = 2 }
        _ = try await fixture.signUp()
        _ = try await fixture.login(address: "192.0.2.1")
        for round in 0..<3 {
            try await Self.request(fixture, address: "203.0.113.\(round)")
        }
        #expect(try await Self.codes(fixture).count == 2, "a stranger cannot flood the mailbox")
        try await Self.request(fixture, address: "192.0.2.1")
        #expect(try await Self.codes(fixture).count == 3, "the owner's own allowance")
        // The first code still works after later ones.
        let first = try #require(try await Self.codes(fixture).first).code
        #expect(try await Self.login(fixture, first).accountSession != nil)
        fixture.clock.advance(by: .seconds(3_601))
        try await Self.request(fixture, address: "203.0.113.9")
        #expect(try await Self.codes(fixture).count == 4)
    }

    @Test("with a second factor the code is the first factor only: a challenge, which a TOTP completes")
    func secondFactor() async throws {
        let fixture = try Self.fixture()
        let (_, secret, _) = try await IdentityStoreFactorTests.enrolled(fixture)
        try await Self.request(fixture)
        let code = try #require(try await Self.codes(fixture).last).code
        let answer = try await Self.login(fixture, code)
        #expect(answer.accountSession == nil)
        let challenge = try #require(answer.challenge)
        // The next time step: the enrolment's confirmation used this one.
        fixture.clock.advance(by: .seconds(30))
        let session = try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(
            challenge: challenge.token, code: IdentityStoreFactorTests.code(secret, fixture)
        ))
        #expect(try await fixture.validate(session.session.token).assuranceLevel == 2)
    }

    @Test("Profile unreachable for the answer: identity.profileUnavailable, and the code works again once it is back")
    func profileDown() async throws {
        let fixture = try Self.fixture()
        _ = try await fixture.signUp()
        try await Self.request(fixture)
        let code = try #require(try await Self.codes(fixture).last).code
        fixture.profile.mode = .unavailable
        let error = await identityError { try await Self.login(fixture, code) }
        #expect(error?.code == .identityProfileUnavailable)
        fixture.profile.mode = .normal
        #expect(try await Self.login(fixture, code).accountSession != nil)
        let again = await identityError { try await Self.login(fixture, code) }
        #expect(again?.code == .wrongCredentials)
    }

    @Test("a new password ends the codes mailed before it")
    func credentialChange() async throws {
        let fixture = try Self.fixture()
        let signedUp = try await fixture.signUp()
        try await Self.request(fixture)
        let code = try #require(try await Self.codes(fixture).last).code
        _ = try await fixture.store.changePassword(IdentityChangePasswordRequest(token: signedUp.session.token, newPassword: SecretString("another horse battery")))
        let error = await identityError { try await Self.login(fixture, code) }
        #expect(error?.code == .wrongCredentials)
    }

    @Test("no codes where userIds are usernames: the request answers the same and mails nothing")
    func usernames() async throws {
        let configuration = try AccountConfiguration(userIdType: .username, keys: AccountConfiguration.default.keys)
        let fixture = try Self.fixture(configuration: configuration)
        _ = try await fixture.signUp("leland")
        try await Self.request(fixture, "leland")
        #expect(try await Self.codes(fixture).isEmpty)
        let error = await identityError { try await Self.login(fixture, "12345678", "leland") }
        #expect(error?.code == .wrongCredentials)
    }

    /// Real threads: many rounds of six sign-ins with one code at once.
    @Test("under concurrency a code gives exactly one session")
    func race() async throws {
        let fixture = try Self.fixture {
            $0.emailCodeMailsPerHour = 100
            // Each round's five losers count as failures: not what this test is about.
            $0.throttle = ThrottlePolicy(threshold: 1_000)
        }
        _ = try await fixture.signUp()
        for round in 0..<15 {
            try await Self.request(fixture)
            let code = try #require(try await Self.codes(fixture).last).code
            let sessions = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<6 {
                    group.addTask { (try? await Self.login(fixture, code))?.accountSession != nil }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(sessions == 1, "round \(round)")
        }
    }
}

import Crypto
@testable import IdentityService
import KontoContracts
import KontoModel
import KontoWire
import Testing

@Suite("Identity: sign-up, login and enumeration")
struct IdentityStoreAccountTests {
    @Test("sign-up stores the credentials in Identity and every other key in Profile, and logs the account in")
    func signUp() async throws {
        let fixture = try IdentityFixture()
        let signedUp = try await fixture.signUp()
        #expect(signedUp.details.userId == "leland@stanford.edu")
        #expect(signedUp.details.accountId == signedUp.accountId)
        #expect(!signedUp.details.contains(PasswordKey.identifier))
        let stored = try #require(fixture.profile.profiles[signedUp.accountId])
        #expect(stored[\.name]?.givenName == "Leland")
        #expect(!stored.contains(PasswordKey.identifier))
        #expect(!stored.contains(UserIdKey.identifier))
        let info = try await fixture.validate(signedUp.session.token)
        #expect(info.accountId == signedUp.accountId)
        #expect(info.account.userId == "leland@stanford.edu")
        #expect(!info.account.isAnonymous)
        #expect(info.privilegedUntil != nil)
        // When it was created, in every answer: the sign-up's, the session check's, a later login's.
        let createdAt = fixture.clock.now
        #expect(info.account.createdAt == createdAt)
        #expect(signedUp.account?.createdAt == createdAt)
        #expect(signedUp.details[\.createdAt] == createdAt)
        let events = try await fixture.events()
        // With the link that confirms the address, for the courier.
        #expect(events.map(\.kind.name) == ["associatedAccount", "mailRequested"])
        #expect(events.first?.accountId == signedUp.accountId)
        fixture.clock.advance(by: .seconds(60))
        let later = try await fixture.login()
        #expect(later.details[\.createdAt] == createdAt)
        #expect(later.account?.createdAt == createdAt)
    }

    @Test("the same userId in another case, or with spaces around it, is taken")
    func sameUserIdOtherCase() async throws {
        let fixture = try IdentityFixture()
        _ = try await fixture.signUp("Leland@Stanford.edu")
        let error = await identityError { try await fixture.signUp(" leland@STANFORD.edu ") }
        #expect(error?.code == AccountError.Code.credentialsTaken)
        // Stored as given, logged in with any case.
        let session = try await fixture.login("LELAND@stanford.EDU")
        #expect(session.details.userId == "Leland@Stanford.edu")
    }

    @Test("every bad input answers with all of its field errors at once")
    func everyFieldError() async throws {
        let configuration = try AccountConfiguration(keys: [
            .requires(\.userId, rules: [.minimalEmail]),
            .requires(\.password, rules: [.mediumPassword]),
            .requires(\.name),
            .collects(\.dateOfBirth),
        ], unknownKeys: .reject)
        let fixture = try IdentityFixture(configuration: configuration)
        let error = await identityError {
            try await fixture.store.signUp(IdentitySignUpRequest(
                userId: "not-an-email",
                password: SecretString("short"),
                details: AccountDetails(values: [
                    "dateOfBirth": .string("yesterday"),
                    "favouriteColour": .string("blue"),
                    "password": .string("again"),
                ])
            ))
        }
        let fields = try #require(error).fields
        #expect(error?.code == AccountError.Code.validationFailed)
        #expect(Set(fields.map(\.key)) == ["userId", "password", "name", "dateOfBirth", "favouriteColour"])
        #expect(fields.contains { $0.key == "password" && $0.code == .credentialNotAccepted })
        #expect(fields.contains { $0.key == "password" && $0.code == .rule("mediumPassword") })
        #expect(fields.contains { $0.key == "name" && $0.code == .missingAccountValue })
        #expect(fields.contains { $0.key == "dateOfBirth" && $0.code == .invalidType })
        #expect(fields.contains { $0.key == "favouriteColour" && $0.code == .unknownKey })
        #expect(fields.contains { $0.key == "userId" && $0.code == .rule("minimalEmail") })
        // Nothing was stored.
        #expect(fixture.profile.profiles.isEmpty)
        #expect(try await fixture.events().isEmpty)
        // The submitted password appears nowhere in the error.
        #expect(!"\(try #require(error))".contains("short"))
    }

    @Test("a missing userId and password are reported as missing")
    func missingCredentials() async throws {
        let fixture = try IdentityFixture()
        let error = await identityError { try await fixture.signUp("", password: "") }
        #expect(error?.code == AccountError.Code.missingAccountValue)
        #expect(Set(error?.fields.map(\.key) ?? []) == ["userId", "password"])
    }

    @Test("a password on the common list is refused at sign-up, change and reset, whatever its case; an operator's list adds to it")
    func commonPasswords() async throws {
        #expect(CommonPasswords.builtIn.count >= 3_000, "ASVS 6.2.4: at least the 3,000 most common")
        let fixture = try IdentityFixture()
        let common = "PassWord1"
        #expect(CommonPasswords.builtIn.contains(common))
        let atSignUp = await identityError { try await fixture.signUp(password: common) }
        #expect(atSignUp?.code == AccountError.Code.validationFailed)
        #expect(atSignUp?.fields.map(\.code) == [.commonPassword])
        let session = try await fixture.signUp()
        let atChange = await identityError {
            try await fixture.store.changePassword(IdentityChangePasswordRequest(token: session.session.token, newPassword: SecretString("qwertyuiop")))
        }
        #expect(atChange?.fields.map(\.code) == [.commonPassword])
        _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "leland@stanford.edu"))
        let token = try #require(try await fixture.events().compactMap { event -> String? in
            if case .passwordResetRequested(_, let token, _) = event.kind { try? IdentityFixture.seal.open(token, accountId: event.accountId) } else { nil }
        }.last)
        let atReset = await identityError {
            try await fixture.store.confirmPasswordReset(IdentityConfirmPasswordResetRequest(token: BearerToken(token), newPassword: SecretString("iloveyou1")))
        }
        #expect(atReset?.fields.map(\.code) == [.commonPassword])
        // The token was not used up by the refused password.
        _ = try await fixture.store.confirmPasswordReset(IdentityConfirmPasswordResetRequest(token: BearerToken(token), newPassword: SecretString("an uncommon choice")))

        var options = IdentityOptions()
        options.commonPasswords = CommonPasswords(adding: "#!comment: the operator's own\nstanford-cardinal\n")
        let stricter = try IdentityFixture(options: options)
        #expect(await identityError { try await stricter.signUp(password: "Stanford-Cardinal") }?.fields.map(\.code) == [.commonPassword])
        #expect(await identityError { try await stricter.signUp(password: "password1") }?.fields.map(\.code) == [.commonPassword], "the built-in list still applies")
        _ = try await stricter.signUp()
    }

    @Test("a 10 KB password is refused at sign-up and login without any hashing")
    func oversizedPassword() async throws {
        // One thread, no queue: any hash would have to wait behind the blocker and fail with identity.busy.
        let fixture = try IdentityFixture(hashingThreads: 1, maxQueued: 0)
        _ = try await fixture.signUp()
        let huge = String(repeating: "x", count: 10_000)
        let gate = ThreadGate()
        let blocker = Task { try await fixture.hashing.submit { gate.wait() } }
        defer { gate.open(); blocker.cancel() }
        try await waitUntil { fixture.hashing.load == 1 }
        let atSignUp = await identityError { try await fixture.signUp("other@stanford.edu", password: huge) }
        #expect(atSignUp?.code == AccountError.Code.validationFailed)
        #expect(atSignUp?.fields.map(\.code) == [.valueTooLarge])
        let atLogin = await identityError { try await fixture.login(password: huge) }
        #expect(atLogin?.code == AccountError.Code.validationFailed)
        // The pool really was full: a normal login is busy.
        #expect(await identityError { try await fixture.login() }?.code == KontoErrorCode.identityBusy)
    }

    @Test("a wrong password and an unknown userId answer exactly the same")
    func noEnumeration() async throws {
        let fixture = try IdentityFixture()
        _ = try await fixture.signUp()
        let wrongPassword = try #require(await identityError { try await fixture.login(password: "not the password") })
        let unknownUser = try #require(await identityError { try await fixture.login("nobody@stanford.edu", password: "not the password") })
        #expect(wrongPassword == unknownUser)
        #expect(wrongPassword.code == AccountError.Code.wrongCredentials)
        #expect(wrongPassword.wireErrorDetails == unknownUser.wireErrorDetails)
        #expect(wrongPassword.wireErrorMessage == unknownUser.wireErrorMessage)
    }

    @Test("strangers failing logins at a userId do not hold the signed-in owner's password checks; the owner's own wrong checks do")
    func signedInChecksCountedApart() async throws {
        var options = IdentityOptions()
        options.throttle = ThrottlePolicy(threshold: 3, baseDelay: .seconds(10), maximumDelay: .seconds(60), window: .seconds(3_600))
        let fixture = try IdentityFixture(options: options)
        let signedUp = try await fixture.signUp()
        // Strangers from addresses of their own hold the userId for logins...
        for index in 0..<5 {
            _ = await identityError { try await fixture.login(password: "a stranger's guess", address: "198.51.100.\(index)") }
        }
        #expect(await identityError { try await fixture.login(address: "198.51.100.99") }?.code == AccountError.Code.throttled)
        // ...not the owner's checks made with the account's own session.
        let privilege = try await fixture.store.reauthenticate(IdentityReauthenticateRequest(token: signedUp.session.token, password: SecretString("correct horse battery")))
        var token = try #require(privilege.session).token
        // Wrong checks through the session count for the account alone, and hold it there (a stolen session guessing).
        for _ in 0..<3 {
            #expect(await identityError { try await fixture.store.reauthenticate(IdentityReauthenticateRequest(token: token, password: SecretString("not it"))) }?.code == AccountError.Code.wrongCredentials)
        }
        let held = await identityError { try await fixture.store.reauthenticate(IdentityReauthenticateRequest(token: token, password: SecretString("correct horse battery"))) }
        #expect(held?.code == AccountError.Code.throttled)
        fixture.clock.advance(by: .seconds(11))
        token = try #require(try await fixture.store.reauthenticate(IdentityReauthenticateRequest(token: token, password: SecretString("correct horse battery"))).session).token
        #expect(try await fixture.validate(token).accountId == signedUp.accountId)
    }

    @Test("after the threshold, further attempts are throttled with a growing retry-after; a success clears the userId")
    func throttling() async throws {
        var options = IdentityOptions()
        options.throttle = ThrottlePolicy(threshold: 3, baseDelay: .seconds(10), maximumDelay: .seconds(60), window: .seconds(3_600))
        let fixture = try IdentityFixture(options: options)
        _ = try await fixture.signUp()
        for _ in 0..<3 {
            #expect(await identityError { try await fixture.login(password: "wrong password") }?.code == AccountError.Code.wrongCredentials)
        }
        let throttled = try #require(await identityError { try await fixture.login() })
        #expect(throttled.code == AccountError.Code.throttled)
        #expect(throttled.retryAfterSeconds == 10)
        #expect(throttled.isRetryable)
        // An unknown userId is throttled the same way (no enumeration through the throttle either).
        for _ in 0..<3 {
            _ = await identityError { try await fixture.login("nobody@stanford.edu", password: "wrong password", address: nil) }
        }
        #expect(await identityError { try await fixture.login("nobody@stanford.edu", address: nil) }?.code == AccountError.Code.throttled)

        fixture.clock.advance(by: .seconds(11))
        #expect(await identityError { try await fixture.login(password: "wrong again") }?.code == AccountError.Code.wrongCredentials)
        // Four failures: the window doubles.
        #expect(await identityError { try await fixture.login() }?.retryAfterSeconds == 20)
        fixture.clock.advance(by: .seconds(21))
        _ = try await fixture.login()
        // The userId's count is cleared; the address keeps its own.
        let keys = fixture.store.throttleKeys(normalizedUserId: "leland@stanford.edu", clientAddress: "192.0.2.1")
        let counts = try await fixture.storage.failures(keys: keys, at: fixture.clock.now, window: .seconds(3_600))
        #expect(counts.map(\.count) == [0, 4])
    }

    @Test("a stranger's failures never lock out a client that signed in before; a guess-storm still holds every other client; a known client's own failures hold it")
    func ownerNotLockedOut() async throws {
        let fixture = try IdentityFixture()
        _ = try await fixture.signUp()
        _ = try await fixture.login(address: "198.51.100.10")
        let throttled = AccountError.Code.throttled
        // A guess-storm from one address, then from many: the userId is locked.
        for attempt in 0..<12 {
            _ = await identityError { try await fixture.login(password: "guess number \(attempt)", address: "203.0.113.\(attempt % 3)") }
        }
        #expect(await identityError { try await fixture.login(address: "192.0.2.77") }?.code == throttled, "an unknown client with the right password is held")
        #expect(await identityError { try await fixture.login(address: nil) }?.code == throttled)
        // The owner's address signed in before: it is held only by its own failures.
        #expect(try await fixture.login(address: "198.51.100.10").accountId != "")
        // A browser's device marker is known wherever it comes from.
        _ = try await fixture.store.login(IdentityLoginRequest(
            userId: "leland@stanford.edu", password: SecretString("correct horse battery"), clientAddress: "198.51.100.10", clientDevice: "device-of-leland"
        ))
        _ = try await fixture.store.login(IdentityLoginRequest(
            userId: "leland@stanford.edu", password: SecretString("correct horse battery"), clientAddress: "192.0.2.200", clientDevice: "device-of-leland"
        ))
        // A known client that guesses is held by its own count.
        for attempt in 0..<5 {
            _ = await identityError { try await fixture.login(password: "my own guess \(attempt)", address: "198.51.100.10") }
        }
        #expect(await identityError { try await fixture.login(address: "198.51.100.10") }?.code == throttled)
    }

    @Test("client addresses are stored keyed (a dump names none); clients known under the old plain hash are still known")
    func keyedClients() async throws {
        let fixture = try IdentityFixture()
        let signedUp = try await fixture.signUp()
        let accountId = signedUp.accountId
        _ = try await fixture.login(address: "198.51.100.10")
        let plain = { (text: String) in Array(SHA256.hash(data: Array(text.utf8))) }
        let since = fixture.clock.now.adding(.seconds(-60))
        #expect(try await fixture.storage.isKnownClient(accountId: accountId, clients: fixture.store.clientHashes(address: "198.51.100.10", device: nil), since: since))
        #expect(try await fixture.storage.isKnownClient(accountId: accountId, clients: [plain("address:198.51.100.10")], since: since) == false)
        // Under another deployment's data key the digest is another: the key, not the address, makes it.
        let other = FactorSecretBox(secret: WireSecret("another deployment's data key, 32+ bytes"))
        #expect(other.clientDigest("address:198.51.100.10") != fixture.store.clientHashes(address: "198.51.100.10", device: nil)[0])
        // A failure counts under the keyed address key, never the plain one.
        _ = await identityError { try await fixture.login(password: "a wrong one", address: "192.0.2.9") }
        let keys = ["address:" + SessionAuthority.digest("192.0.2.9"), fixture.store.throttleKeys(normalizedUserId: "x", clientAddress: "192.0.2.9")[1]]
        #expect(try await fixture.storage.failures(keys: keys, at: fixture.clock.now, window: .seconds(3_600)).map(\.count) == [0, 1])

        // A client remembered the old way (plain SHA-256) is still known: a guess-storm does not lock it out.
        try await fixture.storage.rememberClients(accountId: accountId, clients: [plain("address:198.51.100.77")], at: fixture.clock.now)
        for attempt in 0..<12 {
            _ = await identityError { try await fixture.login(password: "guess number \(attempt)", address: "203.0.113.\(attempt % 3)") }
        }
        #expect(await identityError { try await fixture.login(address: "192.0.2.78") }?.code == AccountError.Code.throttled)
        #expect(try await fixture.login(address: "198.51.100.77").accountId == accountId)
    }

    @Test("reset mails: at most three an hour from strangers together, three more for each client that signed in before")
    func resetMailAllowance() async throws {
        let fixture = try IdentityFixture()
        _ = try await fixture.signUp()
        _ = try await fixture.login(address: "198.51.100.10")
        func mails() async throws -> Int {
            try await fixture.events().filter { if case .passwordResetRequested = $0.kind { true } else { false } }.count
        }
        for attempt in 0..<10 {
            _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "leland@stanford.edu", clientAddress: "203.0.113.\(attempt)"))
        }
        #expect(try await mails() == 3, "strangers' requests are answered alike but send three mails at most")
        // The owner, from an address that signed in before, still gets its mails.
        _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "leland@stanford.edu", clientAddress: "198.51.100.10"))
        #expect(try await mails() == 4)
        // An hour later the strangers' allowance is back.
        fixture.clock.advance(by: .seconds(3_601))
        _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "leland@stanford.edu", clientAddress: "203.0.113.99"))
        #expect(try await mails() == 5)
    }

    @Test("a client address is throttled across userIds")
    func addressThrottle() async throws {
        var options = IdentityOptions()
        options.throttle = ThrottlePolicy(threshold: 3, baseDelay: .seconds(5))
        let fixture = try IdentityFixture(options: options)
        _ = try await fixture.signUp()
        for index in 0..<3 {
            _ = await identityError { try await fixture.login("guess\(index)@stanford.edu", password: "wrong password", address: "198.51.100.7") }
        }
        let error = await identityError { try await fixture.login(address: "198.51.100.7") }
        #expect(error?.code == AccountError.Code.throttled)
        // Another address is not affected.
        _ = try await fixture.login(address: "198.51.100.8")
    }

    @Test("a hash with older, weaker parameters is replaced at the next successful login")
    func rehash() async throws {
        let weak = Argon2Parameters(memoryKiB: 512, iterations: 1, parallelism: 1)
        let storage: any IdentityStorage = InMemoryIdentityStorage()
        let old = try IdentityFixture(storage: storage, parameters: weak)
        let signedUp = try await old.signUp()
        let before = try #require(try await storage.credential(accountId: signedUp.accountId)?.passwordHash)
        #expect(before.contains("m=512,"))
        let raised = try IdentityFixture(storage: storage)
        raised.profile.mode = .normal
        _ = try? await raised.store.profile.create(accountId: signedUp.accountId, details: AccountDetails())
        _ = try await raised.login()
        let after = try #require(try await storage.credential(accountId: signedUp.accountId)?.passwordHash)
        #expect(after.contains("m=1024,"))
        _ = try await raised.login()
    }

    @Test("an anonymous account gets a session; signing up from it keeps the accountId and replaces the anonymous token by a fresh one")
    func anonymousUpgrade() async throws {
        let fixture = try IdentityFixture()
        let anonymous = try await fixture.store.signInAnonymously(IdentityClientRequest())
        let anonymousInfo = try await fixture.validate(anonymous.session.token)
        let createdAt = fixture.clock.now
        #expect(anonymousInfo.account.createdAt == createdAt)
        #expect(anonymous.details[\.createdAt] == createdAt)
        fixture.clock.advance(by: .seconds(600))
        #expect(anonymousInfo.account.isAnonymous)
        #expect(anonymousInfo.account.userId == nil)
        let upgraded = try await fixture.store.signUp(IdentitySignUpRequest(
            userId: "leland@stanford.edu",
            password: SecretString("correct horse battery"),
            details: AccountDetails(values: ["name": IdentityFixture.name]),
            clientAddress: "198.51.100.23",
            anonymousSession: anonymous.session.token
        ))
        #expect(upgraded.accountId == anonymous.accountId)
        // Opened like any account: the client that signed up is the owner's, the address gets its link.
        #expect(try await fixture.storage.isKnownClient(
            accountId: anonymous.accountId, clients: fixture.store.clientHashes(address: "198.51.100.23", device: nil), since: createdAt
        ))
        #expect(try await fixture.events().map(\.kind.name).suffix(2) == ["associatedAccount", "mailRequested"])
        #expect(upgraded.session.token != anonymous.session.token)
        #expect(await identityError { try await fixture.validate(anonymous.session.token) }?.code == AccountError.Code.unauthenticated)
        let info = try await fixture.validate(upgraded.session.token)
        #expect(!info.account.isAnonymous)
        // The account it was: created when the anonymous account was.
        #expect(info.account.createdAt == createdAt)
        #expect(upgraded.details[\.createdAt] == createdAt)
        #expect(info.privilegedUntil != nil)
        #expect(fixture.profile.profiles[anonymous.accountId] != nil)
        #expect(try await fixture.login().accountId == anonymous.accountId)
    }
}

@testable import IdentityService
import KontoContracts
import KontoModel
import KontoWire
import Testing

/// Identity asks the courier for mail in the same transaction as each change it tells of (`mailRequested`), to the
/// account's address, its secret sealed.
@Suite("Identity: the mail it asks for")
struct IdentityStoreMailTests {
    /// The mail requests in the outbox; without the verification links (their own tests below) unless asked for.
    static func mails(_ fixture: IdentityFixture, verification: Bool = false) async throws -> [(accountId: String, request: MailRequest)] {
        try await fixture.events().compactMap { event in
            if case let .mailRequested(request) = event.kind, verification || request.message != .verifyEmail { return (event.accountId, request) }
            return nil
        }
    }

    /// The token of the last verification link asked for.
    static func verificationToken(_ fixture: IdentityFixture) async throws -> String {
        let mail = try #require(try await mails(fixture, verification: true).last { $0.request.message == .verifyEmail })
        return try IdentityFixture.seal.open(try #require(mail.request.sealedToken), accountId: mail.accountId)
    }

    @Test("sign-up asks for a link to its address; its token verifies the address once (emailVerified), only while the address is the account's")
    func verification() async throws {
        let fixture = try IdentityFixture()
        let signedUp = try await fixture.signUp("Leland@Stanford.edu")
        let mail = try #require(try await Self.mails(fixture, verification: true).first)
        #expect(mail.request.message == .verifyEmail && mail.request.to == "Leland@Stanford.edu")
        #expect(mail.request.expiresAt.map(Timestamp.init) == fixture.clock.now.adding(.seconds(86_400)))
        let token = try await Self.verificationToken(fixture)
        #expect(try await fixture.storage.credential(accountId: signedUp.accountId)?.emailVerifiedAt == nil)
        _ = try await fixture.store.confirmEmailVerification(IdentityConfirmEmailVerificationRequest(token: BearerToken(token)))
        #expect(try await fixture.storage.credential(accountId: signedUp.accountId)?.emailVerifiedAt == fixture.clock.now)
        #expect(try await fixture.events().last?.kind == .emailVerified)
        // Once only; a made-up or oversized token is refused the same way.
        for refused in [token, "not-a-token", String(repeating: "x", count: 300)] {
            let error = await identityError { try await fixture.store.confirmEmailVerification(IdentityConfirmEmailVerificationRequest(token: BearerToken(refused))) }
            #expect(error?.code == .invalidVerificationToken)
        }
        // Verified: asking again sends nothing.
        let before = try await Self.mails(fixture, verification: true).count
        _ = try await fixture.store.requestEmailVerification(IdentitySessionRequest(token: signedUp.session.token))
        #expect(try await Self.mails(fixture, verification: true).count == before)

        // A new address is unverified, gets a link of its own, and the previous address's links verify nothing.
        _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "leland@stanford.edu"))
        let strong = signedUp.session.token
        _ = try await fixture.store.changeUserId(IdentityChangeUserIdRequest(token: strong, userId: "leland.new@stanford.edu"))
        #expect(try await fixture.storage.credential(accountId: signedUp.accountId)?.emailVerifiedAt == nil)
        let newToken = try await Self.verificationToken(fixture)
        #expect(newToken != token)
        _ = try await fixture.store.confirmEmailVerification(IdentityConfirmEmailVerificationRequest(token: BearerToken(newToken)))
        #expect(try await fixture.storage.credential(accountId: signedUp.accountId)?.emailVerifiedAt != nil)
    }

    @Test("a new link on request: limited per account and address (account.throttled with when to retry), expired links refused, none for an address-less account")
    func requestedLinks() async throws {
        var options = IdentityOptions()
        options.verificationMailsPerHour = 2
        let fixture = try IdentityFixture(options: options)
        let signedUp = try await fixture.signUp()
        let request = IdentitySessionRequest(token: signedUp.session.token)
        _ = try await fixture.store.requestEmailVerification(request)
        _ = try await fixture.store.requestEmailVerification(request)
        let throttled = await identityError { try await fixture.store.requestEmailVerification(request) }
        #expect(throttled?.code == .throttled && (throttled?.retryAfterSeconds ?? 0) > 0)
        #expect(try await Self.mails(fixture, verification: true).count == 3)
        let token = try await Self.verificationToken(fixture)
        fixture.clock.advance(by: .seconds(86_401))
        let expired = await identityError { try await fixture.store.confirmEmailVerification(IdentityConfirmEmailVerificationRequest(token: BearerToken(token))) }
        #expect(expired?.code == .invalidVerificationToken)
        // An hour on, the allowance is back.
        let session = try await fixture.login()
        _ = try await fixture.store.requestEmailVerification(IdentitySessionRequest(token: session.session.token))

        let anonymous = try await fixture.store.signInAnonymously(IdentityClientRequest())
        let none = await identityError { try await fixture.store.requestEmailVerification(IdentitySessionRequest(token: anonymous.session.token)) }
        #expect(none?.code == .notFound)
        let missing = await identityError { try await fixture.store.requestEmailVerification(IdentitySessionRequest(token: BearerToken("not-a-session"))) }
        #expect(missing?.code == .unauthenticated)
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
        #expect(try await Self.mails(fixture, verification: true).isEmpty)
    }

    @Test("where userIds are usernames the email detail is the address: sign-up sends it a link, which verifies it; a new link on request, none when verified or without an email; Profile unreachable said so")
    func contactAddress() async throws {
        let configuration = try AccountConfiguration(userIdType: .username, keys: [.requires(\.userId), .requires(\.password), .requires(\.name), .collects(\.email)])
        let fixture = try IdentityFixture(configuration: configuration)
        let signedUp = try await fixture.signUp("leland", details: ["name": IdentityFixture.name, "email": .string("Leland@Stanford.edu")])
        #expect(signedUp.details[\.emailVerified] == false)
        let mail = try #require(try await Self.mails(fixture, verification: true).first)
        #expect(mail.request.message == .verifyEmail && mail.request.to == "Leland@Stanford.edu")
        let token = try await Self.verificationToken(fixture)
        _ = try await fixture.store.confirmEmailVerification(IdentityConfirmEmailVerificationRequest(token: BearerToken(token)))
        let credential = try await fixture.storage.credential(accountId: signedUp.accountId)
        #expect(credential?.verifiedEmail == "Leland@Stanford.edu" && credential?.emailVerifiedAt == nil)
        #expect(try await fixture.login("leland").details[\.emailVerified] == true)
        #expect(try await fixture.validate(signedUp.session.token).account.verifiedEmail == "Leland@Stanford.edu")
        // Verified: asking again sends nothing.
        let before = try await Self.mails(fixture, verification: true).count
        _ = try await fixture.store.requestEmailVerification(IdentitySessionRequest(token: signedUp.session.token))
        #expect(try await Self.mails(fixture, verification: true).count == before)
        // Without an email: no link at sign-up, none to ask for.
        let other = try await fixture.signUp("jane", details: ["name": IdentityFixture.name])
        #expect(other.details[\.emailVerified] == nil)
        #expect(try await Self.mails(fixture, verification: true).count == before)
        let none = await identityError { try await fixture.store.requestEmailVerification(IdentitySessionRequest(token: other.session.token)) }
        #expect(none?.code == .notFound)
        fixture.profile.mode = .unavailable
        let down = await identityError { try await fixture.store.requestEmailVerification(IdentitySessionRequest(token: signedUp.session.token)) }
        #expect(down?.code == .identityProfileUnavailable)
    }

    /// The `newSignIn` mails so far, with how each sign-in was made.
    static func newSignIns(_ fixture: IdentityFixture) async throws -> [String] {
        try await mails(fixture).filter { $0.request.message == .newSignIn }.map { $0.request.values["method"] ?? "" }
    }

    @Test("a sign-in from a client that never signed in to the account mails the owner, once per client; a known browser anywhere is no news")
    func newClient() async throws {
        let fixture = try IdentityFixture()
        _ = try await fixture.store.signUp(IdentitySignUpRequest(
            userId: "leland@stanford.edu", password: SecretString("correct horse battery"), details: AccountDetails(values: ["name": IdentityFixture.name]), clientAddress: "198.51.100.10"
        ))
        // The sign-up's own address is known.
        _ = try await fixture.login(address: "198.51.100.10")
        #expect(try await Self.newSignIns(fixture).isEmpty)
        _ = try await fixture.login(address: "203.0.113.5")
        #expect(try await Self.newSignIns(fixture) == ["a password"])
        let mail = try #require(try await Self.mails(fixture).last)
        #expect(mail.request.to == "leland@stanford.edu" && mail.request.values["method"] == "a password")
        _ = try await fixture.login(address: "203.0.113.5")
        // No client given: nothing to tell apart, nothing mailed.
        _ = try await fixture.login(address: nil)
        #expect(try await Self.newSignIns(fixture).count == 1)
        // A browser's marker, then that browser from another network: known.
        let device = { (address: String) in
            try await fixture.store.login(IdentityLoginRequest(userId: "leland@stanford.edu", password: SecretString("correct horse battery"), clientAddress: address, clientDevice: "device-of-leland"))
        }
        _ = try await device("203.0.113.5")
        _ = try await device("192.0.2.44")
        #expect(try await Self.newSignIns(fixture).count == 1)
        // A failed login tells nothing.
        _ = await identityError { try await fixture.login(password: "a guess", address: "192.0.2.99") }
        #expect(try await Self.newSignIns(fixture).count == 1)
    }

    @Test("the owner's mail preferences: on by default; turned off only as a security-related change (audited), on again freely; off, a new client is remembered and not mailed; on, the next new one is", arguments: IdentityStorageKind.allCases)
    func preferences(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            var options = IdentityOptions()
            options.privilegedWindow = .seconds(60)
            let fixture = try IdentityFixture(storage: storage, options: options)
            let signedUp = try await fixture.signUp()
            let token = signedUp.session.token
            #expect(try await fixture.store.mailPreferences(IdentitySessionRequest(token: token)) == IdentityMailPreferences(newSignIn: true))
            fixture.clock.advance(by: .seconds(61))
            func set(_ on: Bool, _ password: String? = nil) async -> ServiceError? {
                await identityError {
                    try await fixture.store.setMailPreferences(IdentitySetMailPreferencesRequest(token: token, newSignIn: on, currentPassword: password.map(SecretString.init)))
                }
            }
            // Off: the window has shut, so the password; a wrong one changes nothing.
            #expect(await set(false)?.code == AccountError.Code.reauthenticationRequired)
            #expect(await set(false, "a guess")?.code == AccountError.Code.wrongCredentials)
            #expect(try await fixture.store.mailPreferences(IdentitySessionRequest(token: token)).newSignIn)
            #expect(await set(false, "correct horse battery") == nil)
            #expect(try await fixture.store.mailPreferences(IdentitySessionRequest(token: token)).newSignIn == false)
            let audited = try await storage.auditEntries(AuditQuery(accountId: signedUp.accountId, type: "mail.preferencesChanged", limit: 10))
            #expect(audited.map { AuditRecord.dictionary($0.record.factsText)?["newSignIn"] } == ["off"])

            _ = try await fixture.login(address: "203.0.113.5")
            #expect(try await Self.newSignIns(fixture).isEmpty)
            // On again: no password needed; that client stays known, the next new one is mailed.
            #expect(await set(true) == nil)
            _ = try await fixture.login(address: "203.0.113.5")
            #expect(try await Self.newSignIns(fixture).isEmpty)
            _ = try await fixture.login(address: "192.0.2.80")
            #expect(try await Self.newSignIns(fixture) == ["a password"])
            // Asking for what is set already writes nothing (a password given is still checked).
            #expect(await set(true, "a guess")?.code == AccountError.Code.wrongCredentials)
            #expect(try await storage.auditEntries(AuditQuery(accountId: signedUp.accountId, type: "mail.preferencesChanged", limit: 10)).count == 2)
        }
    }

    @Test("KONTO_IDENTITY_NEW_CLIENT_MAIL off: new clients are remembered, nobody is mailed")
    func newClientOff() async throws {
        var options = IdentityOptions()
        options.newClientMail = false
        let fixture = try IdentityFixture(options: options)
        _ = try await fixture.signUp()
        _ = try await fixture.login(address: "203.0.113.5")
        #expect(try await Self.newSignIns(fixture).isEmpty)
        let accountId = try #require(try await fixture.events().first?.accountId)
        #expect(try await fixture.storage.isKnownClient(accountId: accountId, clients: fixture.store.clientHashes(address: "203.0.113.5", device: nil), since: fixture.clock.now))
    }

    @Test("a recovery code used is told, with how many are left")
    func recoveryCodeUsed() async throws {
        let fixture = try IdentityFixture()
        let (_, _, _, codes) = try await IdentityStoreFactorTests.withRecoveryCodes(fixture)
        #expect(try await Self.mails(fixture).last?.request.values["factorType"] == "recoveryCodes")
        _ = try await IdentityStoreFactorTests.answer(fixture, recoveryCode: codes[2]).get()
        let used = try await Self.mails(fixture).filter { $0.request.message == .recoveryCodeUsed }
        #expect(used.map(\.request.to) == ["leland@stanford.edu"] && used.first?.request.values == ["remaining": "9"])
    }

    @Test("a session cannot mail any number of chosen addresses: six userId changes an hour, then account.throttled and nothing changes")
    func userIdChangeAllowance() async throws {
        let fixture = try IdentityFixture()
        let signedUp = try await fixture.signUp()
        let change = { (userId: String) in
            try await fixture.store.changeUserId(IdentityChangeUserIdRequest(token: signedUp.session.token, userId: userId, currentPassword: SecretString("correct horse battery")))
        }
        for number in 1...6 { _ = try await change("leland\(number)@stanford.edu") }
        let refused = await identityError { try await change("victim@example.org") }
        #expect(refused?.code == AccountError.Code.throttled && (refused?.retryAfterSeconds ?? 0) >= 1)
        #expect(try await fixture.storage.credential(accountId: signedUp.accountId)?.userId == "leland6@stanford.edu")
        #expect(try await Self.mails(fixture, verification: true).contains { $0.request.to == "victim@example.org" } == false)
        // The account's verification links count against the same hour.
        #expect(await identityError { try await fixture.store.requestEmailVerification(IdentitySessionRequest(token: signedUp.session.token)) }?.code == AccountError.Code.throttled)
        fixture.clock.advance(by: .seconds(3_601))
        _ = try await change("victim@example.org")
    }

    @Test("one contact address gets ten links an hour from every account together; sign-ups past it stand without one")
    func addressAllowance() async throws {
        let configuration = try AccountConfiguration(userIdType: .username, keys: [.requires(\.userId), .requires(\.password), .requires(\.name), .collects(\.email)])
        let fixture = try IdentityFixture(configuration: configuration)
        var sessions: [BearerToken] = []
        for number in 1...11 {
            sessions.append(try await fixture.signUp("user\(number)", details: ["name": IdentityFixture.name, "email": .string(number.isMultiple(of: 2) ? "Victim@Example.org" : "victim@example.org")]).session.token)
        }
        let links = try await Self.mails(fixture, verification: true).filter { $0.request.message == .verifyEmail }
        #expect(links.count == 10)
        #expect(await identityError { try await fixture.store.requestEmailVerification(IdentitySessionRequest(token: sessions[10])) }?.code == AccountError.Code.throttled)
    }
}

import Foundation
import KontoClient
import KontoModel
import KontoTestSupport
import Testing

/// A user's whole life with an account, through the gateway to the four services as processes on PostgreSQL.
@Suite("End to end: journeys", .serialized, .timeLimit(.minutes(5)))
struct JourneyTests {
    static let password = "analytical engine 1843"
    /// Short, so that the test can see it close: reauthentication is demanded once it has.
    static let privilegedSeconds = 3

    @Test("sign up, log in, read, change, events in order, password, userId, reset through the webhook, delete")
    func journey() async throws {
        // Identity's repair of a deletion waits an hour here: the profile that goes within the test's 30 s went the one
        // way deletions take, Profile consuming deletingAccount.
        let environment = ["KONTO_IDENTITY_PRIVILEGED_SECONDS": "\(Self.privilegedSeconds)", "KONTO_IDENTITY_PROFILE_CLEANUP_SECONDS": "3600"]
        try await EndToEndSystem.with(environment: environment) { system in
            let ada = system.client()
            let schema = try await ada.schema()
            #expect(schema.keys.filter { $0.requirement == .requires }.map(\.identifier).contains("handle"))

            // Sign-up: a required key missing is refused with its field; then every required and collected key.
            let missing = await #expect(throws: KontoClientError.self) {
                try await ada.signUp(userId: "ada@example.org", password: Self.password, details: try schema.details(fromAssignments: ["name=Ada Lovelace"]))
            }
            #expect(missing?.status == 422)
            #expect(missing?.fields.map(\.key).contains("handle") == true, "\(String(describing: missing))")
            let collected = try schema.details(fromAssignments: [
                "name=Ada Lovelace", "handle=ada", "email=ada@example.org", "biography=Wrote the first program.", "newsletter=true",
            ])
            let signedUp = try await ada.signUp(userId: "ada@example.org", password: Self.password, details: collected)
            let signedUpAt = ContinuousClock.now
            let accountId = signedUp.session.accountId
            #expect(signedUp.details[identifier: "handle"] == .string("ada"))
            // The account's stream from here on (a new stream starts at the present).
            let stream = try await ada.events()

            // Log in from a second device; read.
            let phone = system.client()
            #expect(try await phone.logIn(userId: "ada@example.org", password: Self.password).session.accountId == accountId)
            let read = try await phone.account()
            #expect(read.accountId == accountId)
            #expect(read.details[identifier: "email"] == .string("ada@example.org"))
            #expect(read.details[identifier: "newsletter"] == .bool(true))
            #expect(read.details[identifier: "name"] == collected[identifier: "name"])
            // When it was created: Identity's, the same in the sign-up's answer and every read, within this test's time.
            let createdAt = try #require(signedUp.details[\.createdAt])
            #expect(read.details[\.createdAt] == createdAt)
            #expect(abs(createdAt.date.timeIntervalSinceNow) < 600)

            // Modify: set keys signup did not ask for, remove a collected one.
            let modified = try await ada.modify(
                set: try schema.details(fromAssignments: ["dateOfBirth=1815-12-10", "languages=en", "languages=fr"]),
                remove: ["biography"],
                ifVersion: read.version
            )
            #expect(modified.details[identifier: "dateOfBirth"] == .string("1815-12-10"))
            #expect(modified.details[identifier: "languages"] == .array([.string("en"), .string("fr")]))
            #expect(modified.details[identifier: "biography"] == nil)
            #expect(try await phone.account().details[identifier: "biography"] == nil)

            // Password: once the privileged window of the sign-up has closed, reauthentication is demanded; with the
            // current password it is accepted, and the other device's session ends.
            try await ContinuousClock().sleep(until: signedUpAt + .seconds(Self.privilegedSeconds) + .milliseconds(500))
            let demanded = await #expect(throws: KontoClientError.self) { try await ada.changePassword(to: "difference engine 1822") }
            #expect(demanded?.code == "account.reauthenticationRequired")
            #expect(try await ada.changePassword(to: "difference engine 1822", currentPassword: Self.password) >= 1)
            let ended = await #expect(throws: KontoClientError.self) { try await phone.account() }
            #expect(ended?.status == 401)
            #expect(try await ada.account().accountId == accountId, "the session that changed it goes on")

            // userId: the old one no longer logs in, the new one does.
            try await ada.changeUserId(to: "countess@example.org", currentPassword: "difference engine 1822")
            let old = await #expect(throws: KontoClientError.self) { try await system.client().logIn(userId: "ada@example.org", password: "difference engine 1822") }
            #expect(old?.code == "account.wrongCredentials")
            try await system.client().logIn(userId: "countess@example.org", password: "difference engine 1822")

            // The account's events since the stream opened: Identity's in the order they happened, Profile's one
            // change among them. Two producers' events have no defined order between them (each relays its own
            // outbox; docs/NOTIFICATIONS.md), so Profile's may be stored before an earlier one of Identity's: seen once
            // with other suites loading the machine. The sign-up's may lead: it reaches Notifications a moment after
            // the sign-up answered, possibly after the stream's start.
            let identityEvents = ["associatedAccount", "passwordChanged", "sessionsRevoked", "userIdChanged", "associatedAccount"]
            let types = try await Self.events(stream, until: { types in
                types.contains("detailsChanged") && types.filter { $0 != "detailsChanged" }.suffix(5) == identityEvents[...]
            }, within: .seconds(30)).map(\.type)
            #expect(Array(types.filter { $0 != "detailsChanged" }.suffix(5)) == identityEvents, "\(types)")
            #expect(types.filter { $0 == "detailsChanged" }.count == 1, "\(types)")
            #expect(types.count <= 7, "\(types)")

            // Password reset through the mailer webhook that receives passwordResetRequested.
            let forgetful = system.client()
            try await forgetful.requestPasswordReset(userId: "countess@example.org")
            let token = try await system.resetToken(for: "countess@example.org")
            try await forgetful.confirmPasswordReset(token: token, newPassword: "lovelace notes 1843")
            let afterReset = await #expect(throws: KontoClientError.self) { try await ada.account() }
            #expect(afterReset?.status == 401, "a reset ends every session")
            let reused = await #expect(throws: KontoClientError.self) { try await forgetful.confirmPasswordReset(token: token, newPassword: "another password 1844") }
            #expect(reused?.code == "account.invalidResetToken")

            // A second factor: the test plays the authenticator app. A password reset does not bypass it; the
            // challenge works once. The owner confirms the address first (from the signed-in app, which stays
            // signed in): a factor added before an address is proven is a squatter's, and ends with the proof.
            let hopper = system.client()
            try await hopper.signUp(userId: "hopper@example.org", password: Self.password, details: try schema.details(fromAssignments: ["name=Grace Hopper", "handle=grace"]))
            let hopperId = try #require(try await hopper.account()[\.accountId])
            let link = try #require(try await system.stack.mail(accountId: hopperId, .verifyEmail, logger: EndToEndSystem.logger).secret)
            try await hopper.confirmEmailVerification(token: link)
            let enrolment = try await hopper.enrollTOTP(currentPassword: Self.password)
            try await hopper.confirmTOTP(factorId: enrolment.factorId, code: try #require(TOTPTestCode.code(base32Secret: enrolment.secret)))
            try await hopper.requestPasswordReset(userId: "hopper@example.org")
            let hopperToken = try await system.resetToken(for: "hopper@example.org")
            try await hopper.confirmPasswordReset(token: hopperToken, newPassword: "nanosecond wire 1952")
            let stolen = system.client()
            let challenged = await #expect(throws: KontoClientError.self) { try await stolen.logIn(userId: "hopper@example.org", password: "nanosecond wire 1952") }
            #expect(challenged?.status == 202, "after a reset the login still asks for the second factor")
            let challenge = try #require(challenged?.challenge)
            #expect(try await stolen.currentSession() == nil, "the password alone yields no session")
            try await stolen.completeLogIn(challenge: challenge, code: try #require(TOTPTestCode.code(base32Secret: enrolment.secret, offset: 1)))
            #expect(try await stolen.account()[\.userId] == "hopper@example.org")
            let again = await #expect(throws: KontoClientError.self) {
                try await system.client().completeLogIn(challenge: challenge, recoveryCode: "abcd-efgh-jkmn")
            }
            #expect(again?.code == "account.invalidChallenge", "a challenge works once")

            // Delete: deletingAccount reaches the audit endpoint, the profile is gone (by the event alone), the login fails.
            let last = system.client()
            // With the password in the deletion itself: the 3 s window that login opens can close on a loaded machine
            // before the next call (a full run showed it).
            try await last.logIn(userId: "countess@example.org", password: "lovelace notes 1843")
            try await last.deleteAccount(currentPassword: "lovelace notes 1843")
            try await EndToEndSystem.waitUntil(within: .seconds(30), "deletingAccount delivered and the profile removed") {
                let delivered = try EndToEndSystem.events(receivedBy: system.audit, secret: EndToEndSystem.auditSecret)
                    .contains { $0["type"] as? String == "deletingAccount" && $0["accountId"] as? String == accountId }
                let profiles = try await system.count("SELECT 1 FROM profile.accounts WHERE account_id = '\(accountId)'")
                return delivered && profiles == 0
            }
            #expect(try await system.count("SELECT 1 FROM identity.credentials WHERE account_id = '\(accountId)'") == 0)
            #expect(try await system.count("SELECT 1 FROM identity.profile_cleanups WHERE account_id = '\(accountId)'") == 1, "the repair is still to come")
            let gone = await #expect(throws: KontoClientError.self) { try await system.client().logIn(userId: "countess@example.org", password: "lovelace notes 1843") }
            #expect(gone?.code == "account.wrongCredentials")
        }
    }

    @Test("an anonymous account upgraded by sign-up keeps its accountId, on a fresh session")
    func anonymousUpgrade() async throws {
        try await EndToEndSystem.with { system in
            let client = system.client()
            let anonymous = try await client.signInAnonymously()
            let accountId = anonymous.session.accountId
            // An anonymous account has no details until it signs up (Identity holds it; Profile has nothing yet).
            let before = try await client.account()
            #expect(before.accountId == accountId)
            #expect(before.isAnonymous)
            let schema = try await client.schema()

            let upgraded = try await client.signUp(userId: "emmy@example.org", password: Self.password, details: try schema.details(fromAssignments: ["name=Emmy Noether", "handle=emmy"]))
            #expect(upgraded.session.accountId == accountId)
            let account = try await client.account()
            #expect(account.accountId == accountId)
            #expect(!account.isAnonymous)
            #expect(account.details[identifier: "handle"] == .string("emmy"))
            #expect(try await system.count("SELECT 1 FROM profile.accounts WHERE account_id = '\(accountId)'") == 1)

            let again = system.client()
            #expect(try await again.logIn(userId: "emmy@example.org", password: Self.password).session.accountId == accountId)
        }
    }

    // MARK: Helpers

    /// The stream's events until `done` holds for their types, or an error when that does not happen within `bound`.
    static func events(_ stream: AsyncThrowingStream<KontoEvent, any Error>, until done: @escaping @Sendable ([String]) -> Bool, within bound: Duration) async throws -> [KontoEvent] {
        try await withThrowingTaskGroup(of: [KontoEvent]?.self) { group in
            group.addTask {
                var events: [KontoEvent] = []
                for try await event in stream {
                    events.append(event)
                    if done(events.map(\.type)) { break }
                }
                return events
            }
            group.addTask {
                try await Task.sleep(for: bound)
                return nil
            }
            defer { group.cancelAll() }
            guard let events = try await group.next() ?? nil else {
                throw EndToEndError("the expected events did not come on the stream within \(bound)")
            }
            return events
        }
    }
}

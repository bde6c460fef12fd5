import IdentityService
import KontoContracts
import KontoModel
import KontoPostgres
import KontoTestSupport
import KontoWire
import Logging
import PostgresNIO
import ProfileService
import Testing

/// Two Identity processes' worth of servers on one PostgreSQL database.
@Suite("Identity replicas share one database")
struct IdentityReplicaTests {
    @Test("a userId throttled through one Identity is throttled through a second one on the same database")
    func sharedThrottle() async throws {
        let options = {
            var options = IdentityOptions()
            options.throttle = ThrottlePolicy(threshold: 3, baseDelay: .seconds(60))
            return options
        }()
        try await TestDatabase.withFreshDatabase { database in
            let settings = IdentityServiceHarness.settings(database)
            try await IdentityServiceHarness.run(database: settings, options: options) { first in
                let second = try IdentityServer(
                    configuration: IdentityServiceHarness.configuration(database: settings, profilePort: first.profilePort, options: options),
                    logger: IdentityServiceHarness.logger
                )
                try await RunningServices.with([second], logger: IdentityServiceHarness.logger) {
                    let client = IdentityServiceHarness.client(port: try await second.localAddress().port!, as: WireAllowList.gateway)
                    try await RunningServices.with([client], logger: IdentityServiceHarness.logger) {
                        _ = try await first.identity.signUp("leland@stanford.edu")
                        for _ in 0..<3 {
                            #expect(await wireErrorCode { try await first.identity.login("leland@stanford.edu", password: "wrong password") } == AccountError.Code.wrongCredentials)
                        }
                        let throttled = try #require(await wireError { try await client.login("leland@stanford.edu") })
                        #expect(throttled.code == AccountError.Code.throttled)
                        #expect(throttled.isRetryable)
                        let retryAfter = try #require(ServiceError(throttled)?.retryAfterSeconds)
                        #expect((1...60).contains(retryAfter))
                    }
                }
            }
        }
    }

    @Test("wrong second-factor codes sent to one Identity throttle the account's codes at a second one on the same database")
    func sharedSecondFactorThrottle() async throws {
        try await TestDatabase.withFreshDatabase { database in
            let settings = IdentityServiceHarness.settings(database)
            try await IdentityServiceHarness.run(database: settings, options: IdentityOptions()) { first in
                let second = try IdentityServer(
                    configuration: IdentityServiceHarness.configuration(database: settings, profilePort: first.profilePort, options: IdentityOptions()),
                    logger: IdentityServiceHarness.logger
                )
                try await RunningServices.with([second], logger: IdentityServiceHarness.logger) {
                    let client = IdentityServiceHarness.client(port: try await second.localAddress().port!, as: WireAllowList.gateway)
                    try await RunningServices.with([client], logger: IdentityServiceHarness.logger) {
                        let signedUp = try await first.identity.signUp("leland@stanford.edu")
                        let enrolment = try await first.identity.call(IdentityContract.enrollTOTP, IdentitySecuredRequest(token: signedUp.session.token))
                        let code = try #require(TOTPTestCode.code(base32Secret: enrolment.secret.value))
                        _ = try await first.identity.call(IdentityContract.confirmTOTP, IdentityConfirmFactorRequest(token: signedUp.session.token, factorId: enrolment.factorId, code: SecretString(code)))
                        let challenge = try #require(try await first.identity.call(IdentityContract.login, IdentityLoginRequest(userId: "leland@stanford.edu", password: SecretString("correct horse battery"))).challenge)
                        // Five wrong codes through the first replica…
                        for _ in 0..<5 {
                            let wrong = await wireErrorCode {
                                try await first.identity.call(IdentityContract.completeSecondFactor, IdentitySecondFactorRequest(challenge: challenge.token, code: SecretString("abcdef")))
                            }
                            #expect(wrong == AccountError.Code.wrongSecondFactor)
                        }
                        // …and the right one through the second waits (on a new challenge: one takes five answers).
                        let next = try #require(TOTPTestCode.code(base32Secret: enrolment.secret.value, offset: 1))
                        let again = try #require(try await client.call(IdentityContract.login, IdentityLoginRequest(userId: "leland@stanford.edu", password: SecretString("correct horse battery"))).challenge)
                        let throttled = try #require(await wireError {
                            try await client.call(IdentityContract.completeSecondFactor, IdentitySecondFactorRequest(challenge: again.token, code: SecretString(next)))
                        })
                        #expect(throttled.code == AccountError.Code.throttled)
                        #expect((ServiceError(throttled)?.retryAfterSeconds ?? 0) >= 1)
                    }
                }
            }
        }
    }

    @Test("with Profile stopped, sign-up fails retryably and leaves the userId free and no profile row")
    func profileStopped() async throws {
        try await TestDatabase.withFreshDatabase { database in
            let settings = IdentityServiceHarness.settings(database)
            // Profile first listens, then is stopped; Identity keeps its (now dead) address.
            let profileServer = try ProfileServer(configuration: ProfileServiceConfiguration(port: 0, secret: WireSecret(IdentityServiceHarness.secret), database: settings), logger: IdentityServiceHarness.logger)
            let profilePort = try await RunningServices.with([profileServer], logger: IdentityServiceHarness.logger) {
                try await profileServer.localAddress().port!
            }
            let identityServer = try IdentityServer(configuration: IdentityServiceHarness.configuration(database: settings, profilePort: profilePort), logger: IdentityServiceHarness.logger)
            try await RunningServices.with([identityServer], logger: IdentityServiceHarness.logger) {
                let client = IdentityServiceHarness.client(port: try await identityServer.localAddress().port!, as: WireAllowList.gateway)
                try await RunningServices.with([client], logger: IdentityServiceHarness.logger) {
                    let error = try #require(await wireError { try await client.signUp("leland@stanford.edu") })
                    #expect(error.code == KontoErrorCode.identityProfileUnavailable)
                    #expect(error.isRetryable)
                }
            }
            // Profile back on the same database: no row, and the userId signs up.
            try await IdentityServiceHarness.run(database: settings, options: nil) { running in
                try await TestDatabase.withClient(database, logger: IdentityServiceHarness.logger) { inspector in
                    let rows = try await inspector.query("SELECT count(*) FROM profile.accounts", logger: IdentityServiceHarness.logger)
                    for try await count in rows.decode(Int64.self) {
                        #expect(count == 0)
                    }
                }
                _ = try await running.identity.signUp("leland@stanford.edu")
            }
        }
    }

    @Test("with Profile answering after Identity's deadline but committing, the userId is free and the profile row is deleted")
    func profileLate() async throws {
        try await TestDatabase.withFreshDatabase { database in
            let settings = IdentityServiceHarness.settings(database)
            let logger = IdentityServiceHarness.logger
            let profileServer = try ProfileServer(configuration: ProfileServiceConfiguration(port: 0, secret: WireSecret(IdentityServiceHarness.secret), database: settings), logger: logger)
            try await RunningServices.with([profileServer], logger: logger) {
                let profile = IdentityServiceHarness.client(port: try await profileServer.localAddress().port!, as: IdentityContract.serviceName, at: ProfileContract.serviceName)
                // A Profile in front of the real one whose create commits, then answers after Identity gave up.
                let slow = LateProfileProxy(upstream: profile, delay: .seconds(30), secret: IdentityServiceHarness.secret, logger: logger)
                try await RunningServices.with([profile, slow.server], logger: logger) {
                    var options = IdentityOptions()
                    options.cleanupInterval = .milliseconds(50)
                    // Long enough to see the orphan before the job deletes it, even on a loaded machine.
                    options.profileCleanupDelay = .seconds(3)
                    let identityServer = try IdentityServer(
                        configuration: IdentityServiceHarness.configuration(
                            database: settings,
                            profilePort: try await slow.server.localAddress().port!,
                            options: options,
                            profileTimeout: .seconds(2)
                        ),
                        logger: logger
                    )
                    try await RunningServices.with([identityServer], logger: logger) {
                        let client = IdentityServiceHarness.client(port: try await identityServer.localAddress().port!, as: WireAllowList.gateway)
                        try await RunningServices.with([client], logger: logger) {
                            try await TestDatabase.withClient(database, logger: logger) { inspector in
                                func count(_ table: String) async throws -> Int64 {
                                    var total: Int64 = 0
                                    let rows = try await inspector.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table)"), logger: logger)
                                    for try await count in rows.decode(Int64.self) {
                                        total = count
                                    }
                                    return total
                                }
                                #expect(await wireErrorCode { try await client.signUp("leland@stanford.edu") } == KontoErrorCode.identityProfileUnavailable)
                                // The late create committed; the userId is free at once (no credentials row, pending or not).
                                #expect(try await count("profile.accounts") == 1)
                                #expect(try await count("identity.credentials") == 0)
                                // After the clean-up delay the job deletes the orphaned profile.
                                try await waitUntil(timeout: .seconds(20)) { try await count("profile.accounts") == 0 }
                                // …and then forgets the clean-up.
                                try await waitUntil(timeout: .seconds(20)) { try await count("identity.profile_cleanups") == 0 }
                            }
                        }
                    }
                }
            }
        }
    }
}

import AsyncHTTPClient
import Foundation
import IdentityService
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
import NIOCore
import NIOHTTP1
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `konto-identity` and `konto-profile` as real processes on real sockets, sharing one PostgreSQL database.
@Suite("konto-identity process")
struct IdentityProcessTests {
    static let secret = IdentityServiceHarness.secret

    static func environment(identityPort: Int, profilePort: Int, database: PostgresTestDatabase?) -> [String: String] {
        var environment = [
            "KONTO_IDENTITY_PORT": "\(identityPort)",
            "KONTO_PROFILE_PORT": "\(profilePort)",
            "KONTO_WIRE_SECRET": secret,
            "KONTO_LOG_LEVEL": "warning",
            // No Notifications in these tests: events stay in the outbox.
            "KONTO_IDENTITY_RELAY": "off",
            "KONTO_PROFILE_EVENTS": "off",
        ]
        environment["KONTO_IDENTITY_DATABASE_URL"] = database?.url
        environment["KONTO_PROFILE_DATABASE_URL"] = database?.url
        return environment
    }

    @Test("sign up, log in, validate and delete through konto-identity and konto-profile processes; the audit chain's head at /metrics; both stop on SIGTERM")
    func endToEnd() async throws {
        try await TestDatabase.withFreshDatabase(logger: IdentityServiceHarness.logger) { database in
            let identityPort = try FreePort.loopback()
            let profilePort = try FreePort.loopback()
            let metricsPort = try FreePort.loopback()
            var environment = Self.environment(identityPort: identityPort, profilePort: profilePort, database: database)
            environment["KONTO_IDENTITY_METRICS_PORT"] = "\(metricsPort)"
            let profile = try ServiceProcess.start(try ServiceProcess.executable(named: "konto-profile"), environment: environment)
            let identity = try ServiceProcess.start(try ServiceProcess.executable(named: "konto-identity"), environment: environment)
            do {
                let client = IdentityServiceHarness.client(port: identityPort, as: WireAllowList.gateway)
                try await RunningServices.with([client], logger: IdentityServiceHarness.logger) {
                    // Identity is ready once Profile, started alongside, answers it too (on a loaded machine that takes a while).
                    let deadline = ContinuousClock.now + .seconds(60)
                    var health = try await Eventually.answer { try await client.call(HealthContract.check, .init()) }
                    while health.status != .ready, ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(100))
                        health = try await Eventually.answer { try await client.call(HealthContract.check, .init()) }
                    }
                    #expect(health.status == .ready, "identity: \(identity.output)\nprofile: \(profile.output)")
                    let signedUp = try await Eventually.answer {
                        try await client.signUp("ada@example.org", password: "analytical engine", details: ["name": .object(["givenName": .string("Ada"), "familyName": .string("Lovelace")])])
                    }
                    let session = try await client.login("ADA@example.org", password: "analytical engine")
                    #expect(session.accountId == signedUp.accountId)
                    #expect(session.details[\.name]?.familyName == "Lovelace")
                    #expect(try await client.validate(session.session.token).accountId == signedUp.accountId)
                    _ = try await client.call(IdentityContract.delete, IdentityDeleteRequest(token: session.session.token))
                    #expect(await wireErrorCode { try await client.login("ada@example.org", password: "analytical engine") } == AccountError.Code.wrongCredentials)
                    #expect(await wireErrorCode { try await client.validate(signedUp.session.token) } == AccountError.Code.unauthenticated)
                    // The audit job (every 2 s) seals the sign-up, sign-in and deletion and publishes the head the
                    // database holds: a scraper's copy of it.
                    let published = try await Self.publishedHead(metricsPort: metricsPort, database: database)
                    #expect(published.metrics == published.database && (published.database[0] ?? 0) >= 3, "\(published)")
                }
                for process in [identity, profile] {
                    process.signal(SIGTERM)
                    let status = await process.waitForExit(timeout: .seconds(30))
                    #expect(status == 0, "output: \(process.output)")
                }
            } catch {
                await identity.stop()
                await profile.stop()
                Issue.record("the processes' output\nidentity: \(identity.output)\nprofile: \(profile.output)")
                throw error
            }
            await identity.stop()
            await profile.stop()
        }
    }

    /// The head `/metrics` shows once it is the database's (position, first 48 bits of the hash, anchor), and the
    /// database's; after 30 s, whatever they were.
    static func publishedHead(metricsPort: Int, database: PostgresTestDatabase) async throws -> (metrics: [Double?], database: [Double?]) {
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        defer { _ = http.shutdown() }
        return try await IdentityStorageKind.withPostgres(database) { storage in
            let deadline = ContinuousClock.now + .seconds(30)
            while true {
                let state = try await storage.auditChainState()
                let response = try await http.execute(HTTPClientRequest(url: "http://127.0.0.1:\(metricsPort)/metrics"), timeout: .seconds(5))
                #expect(response.status == .ok && response.headers.first(name: "content-type")?.hasPrefix("text/plain") == true)
                let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
                let shown = IdentityStoreAuditTests.published(text)
                let expected = IdentityStoreAuditTests.published(state)
                if (shown == expected && state.headPosition >= 3) || ContinuousClock.now > deadline {
                    let other = try await http.execute(HTTPClientRequest(url: "http://127.0.0.1:\(metricsPort)/v1/account"), timeout: .seconds(5))
                    #expect(other.status == .notFound, "only /metrics is served there")
                    return (shown, expected)
                }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    @Test("a bad configuration is refused at start, naming the variable", arguments: [
        ("KONTO_WIRE_SECRET", "short", "KONTO_WIRE_SECRET must be at least 32 bytes long (generate one with: openssl rand -hex 32)"),
        ("KONTO_IDENTITY_PORT", "http", "KONTO_IDENTITY_PORT must be a whole number from 0 to 65535"),
        ("KONTO_IDENTITY_DATABASE_URL", "mysql://db/identity", "KONTO_IDENTITY_DATABASE_URL is not a usable PostgreSQL URL"),
        ("KONTO_IDENTITY_ARGON2_MEMORY_KIB", "1024", "KONTO_IDENTITY_ARGON2_MEMORY_KIB must be"),
        ("KONTO_IDENTITY_THROTTLE_FAILURES", "0", "KONTO_IDENTITY_THROTTLE_FAILURES must be"),
        ("KONTO_IDENTITY_PROFILE_CLEANUP_SECONDS", "soon", "KONTO_IDENTITY_PROFILE_CLEANUP_SECONDS must be"),
        ("KONTO_IDENTITY_STALE_RESERVATION_SECONDS", "0", "KONTO_IDENTITY_STALE_RESERVATION_SECONDS must be"),
        ("KONTO_ACCOUNTS_CONFIG", "/nonexistent/accounts.yaml", "cannot read file at /nonexistent/accounts.yaml"),
        ("KONTO_IDENTITY_PROVIDERS", "/nonexistent/providers.yaml", "providers.yaml: cannot read file at /nonexistent/providers.yaml"),
        ("KONTO_IDENTITY_PROVIDER_KEY_COOLDOWN_SECONDS", "-1", "KONTO_IDENTITY_PROVIDER_KEY_COOLDOWN_SECONDS must be"),
    ])
    func badConfiguration(variable: String, value: String, message: String) async throws {
        var environment = Self.environment(identityPort: try FreePort.loopback(), profilePort: try FreePort.loopback(), database: nil)
        environment[variable] = value
        let process = try ServiceProcess.start(try ServiceProcess.executable(named: "konto-identity"), environment: environment)
        let status = await process.waitForExit(timeout: .seconds(30))
        let output = process.output
        await process.stop()
        #expect(status == 2)
        #expect(output.contains(message), "output: \(output)")
        #expect(!output.contains(Self.secret))
    }
}

import Foundation
import KontoContracts
import KontoModel
import KontoTesting
import KontoWire
import Logging
import NIOCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `konto-profile` as a real process on real sockets against a real PostgreSQL.
@Suite("konto-profile process")
struct ProfileProcessTests {
    static let secret = ProfileServiceHarness.secret

    static func environment(port: Int, database: PostgresTestDatabase?) throws -> [String: String] {
        var environment = [
            "KONTO_PROFILE_PORT": "\(port)",
            "KONTO_WIRE_SECRET": secret,
            "KONTO_ACCOUNTS_CONFIG": try ProfileServiceHarness.contractAccountsPath(),
            "KONTO_PROFILE_DB_TIMEOUT_MS": "1500",
            "KONTO_LOG_LEVEL": "warning",
        ]
        environment["KONTO_PROFILE_DATABASE_URL"] = database?.url
        return environment
    }

    static func client(port: Int) -> WireClient {
        var configuration = WireClient.Configuration(port: port, serviceName: "profile-process-test", secret: WireSecret(secret))
        configuration.backoffMaximum = .milliseconds(500)
        configuration.requestTimeout = .seconds(10)
        return WireClient(configuration: configuration, logger: ProfileServiceHarness.logger)
    }

    /// Calls until an answer comes, while the failures are retryable; bounded by `seconds`.
    static func eventually<Response: Sendable>(
        seconds: Int = 60,
        _ call: @Sendable () async throws -> Response
    ) async throws -> Response {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            do {
                return try await call()
            } catch let error as WireError where error.isRetryable && ContinuousClock.now < deadline {
                // The client's own reconnect backoff paces these attempts.
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    @Test("serves over PostgreSQL, fails fast while the database is down, recovers, and stops on SIGTERM")
    func outageAndShutdown() async throws {
        let cluster = try await TemporaryPostgresCluster.start()
        let database = try await TestDatabase.createDatabase(on: cluster.maintenanceDatabase, logger: ProfileServiceHarness.logger)
        let port = try FreePort.loopback()
        let process = try ServiceProcess.start(
            try ServiceProcess.executable(named: "konto-profile"),
            environment: try Self.environment(port: port, database: database)
        )
        do {
            let client = Self.client(port: port)
            try await RunningServices.with([client], logger: ProfileServiceHarness.logger) {
                let health = try await Self.eventually { try await client.call(HealthContract.check, .init()) }
                #expect(health.status == .ready)

                var details = AccountDetails()
                details[\.name] = PersonName(givenName: "Ada", familyName: "Lovelace")
                _ = try await client.call(ProfileContract.create, .init(accountId: "acc-1", details: details))

                try await cluster.stop()
                let started = ContinuousClock.now
                let error = await #expect(throws: WireError.self) {
                    _ = try await client.call(ProfileContract.load, .init(accountId: "acc-1"))
                }
                #expect(error?.code == ProfileContract.ErrorCode.storageUnavailable)
                #expect(error?.isRetryable == true)
                // Fails fast: bounded by the 1.5 s database timeout, not the 10 s request timeout.
                #expect(ContinuousClock.now - started < .seconds(8))
                let down = try await client.call(HealthContract.check, .init())
                #expect(down.status == .notReady)
                #expect(process.isRunning)

                try await cluster.start()
                let loaded = try await Self.eventually {
                    do {
                        return try await client.call(ProfileContract.load, .init(accountId: "acc-1", keys: ["name"]))
                    } catch let error as WireError where error.code == ProfileContract.ErrorCode.storageUnavailable {
                        throw error
                    }
                }
                #expect(loaded.details[\.name]?.givenName == "Ada")
                #expect(loaded.version == 1)
                let up = try await Self.eventually { try await client.call(HealthContract.check, .init()) }
                #expect(up.status == .ready)
            }
            process.signal(SIGTERM)
            let status = await process.waitForExit(timeout: .seconds(30))
            #expect(status == 0, "konto-profile output: \(process.output)")
        } catch {
            await process.stop()
            try? await cluster.destroy()
            throw error
        }
        await process.stop()
        try await cluster.destroy()
    }

    @Test("a bad configuration is refused at start, naming the problem", arguments: [
        ("KONTO_WIRE_SECRET", "short", "KONTO_WIRE_SECRET must be at least 16 bytes long"),
        ("KONTO_PROFILE_PORT", "http", "KONTO_PROFILE_PORT must be a whole number from 0 to 65535"),
        ("KONTO_PROFILE_DATABASE_URL", "mysql://db/profile", "KONTO_PROFILE_DATABASE_URL is not a usable PostgreSQL URL"),
        ("KONTO_ACCOUNTS_CONFIG", "/nonexistent/accounts.yaml", "cannot read file at /nonexistent/accounts.yaml"),
    ])
    func badConfiguration(variable: String, value: String, message: String) async throws {
        var environment = try Self.environment(port: try FreePort.loopback(), database: nil)
        environment[variable] = value
        let process = try ServiceProcess.start(try ServiceProcess.executable(named: "konto-profile"), environment: environment)
        let status = await process.waitForExit(timeout: .seconds(30))
        let output = process.output
        await process.stop()
        #expect(status == 2)
        #expect(output.contains(message), "output: \(output)")
        #expect(!output.contains(Self.secret))
    }
}

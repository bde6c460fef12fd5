import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization
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
            // No Notifications in these tests.
            "KONTO_PROFILE_EVENTS": "off",
        ]
        environment["KONTO_PROFILE_DATABASE_URL"] = database?.url
        return environment
    }

    /// A client calling as `name` (the process enforces the allow-list: Identity creates, loads and deletes).
    static func client(port: Int, as name: String = IdentityContract.serviceName) -> WireClient {
        var configuration = WireClient.Configuration(port: port, serviceName: name, serverName: ProfileContract.serviceName, secret: WireSecret(secret))
        configuration.backoff.maximum = .milliseconds(500)
        configuration.requestTimeout = .seconds(10)
        configuration.connectTimeout = .seconds(15)  // the whole suite's load can push a handshake past production's 3 s
        return WireClient(configuration: configuration, logger: ProfileServiceHarness.logger)
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
                let health = try await Eventually.answer { try await client.call(HealthContract.check, .init()) }
                #expect(health.status == .ready)

                var details = AccountDetails()
                details[\.name] = PersonName(givenName: "Ada", familyName: "Lovelace")
                _ = try await client.call(ProfileContract.create, .init(accountId: "acc-1", details: details))

                try await cluster.stop()
                let started = ContinuousClock.now
                let error = await #expect(throws: WireError.self) {
                    _ = try await client.call(ProfileContract.load, .init(accountId: "acc-1"))
                }
                #expect(error?.code == KontoErrorCode.profileStorageUnavailable)
                #expect(error?.isRetryable == true)
                // Fails fast: bounded by the 1.5 s database timeout, not the 10 s request timeout.
                #expect(ContinuousClock.now - started < .seconds(8))
                let down = try await client.call(HealthContract.check, .init())
                #expect(down.status == .notReady)
                #expect(process.isRunning)

                try await cluster.start()
                let loaded = try await Eventually.answer {
                    do {
                        return try await client.call(ProfileContract.load, .init(accountId: "acc-1", keys: ["name"]))
                    } catch let error as WireError where error.code == KontoErrorCode.profileStorageUnavailable {
                        throw error
                    }
                }
                #expect(loaded.details[\.name]?.givenName == "Ada")
                #expect(loaded.version == 1)
                let up = try await Eventually.answer { try await client.call(HealthContract.check, .init()) }
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
        ("KONTO_WIRE_SECRET", "short", "KONTO_WIRE_SECRET must be at least 32 bytes long (generate one with: openssl rand -hex 32)"),
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

// MARK: Shutdown with requests in flight

extension ProfileProcessTests {
    /// Set once the test has sent SIGTERM.
    final class Flag: Sendable {
        private let value = Atomic(false)
        func set() { self.value.store(true, ordering: .sequentiallyConsistent) }
        var isSet: Bool { self.value.load(ordering: .sequentiallyConsistent) }
    }

    /// What one caller looping over loads and modifies of its own account saw.
    struct CallerReport: Sendable {
        var answered = 0
        var answeredAfterSIGTERM = 0
        /// The code that ended its loop: a request the server had not accepted.
        var refusal: String?
        /// Anything else: a request that was accepted but did not get its real answer.
        var failure: String?
    }

    /// Loads and modifies `accountId` in turn, checking every answer, until a request is refused because the
    /// service is going away (`wire.shuttingDown` after its goaway, `wire.serviceUnavailable` when there is no
    /// connection left to send on) or anything else goes wrong.
    static func callInLoop(_ client: WireClient, accountId: String, startsWithModify: Bool, sigterm: Flag) async -> CallerReport {
        var report = CallerReport()
        var version: Int64 = 1
        var biography = "start"
        var call = 0
        while true {
            call += 1
            let isLoad = (call % 2 == 1) != startsWithModify
            do {
                let record: ProfileRecord
                if isLoad {
                    record = try await client.call(ProfileContract.load, .init(accountId: accountId, keys: ["biography"]))
                } else {
                    let modifications = AccountModifications(set: AccountDetails(values: ["biography": .string("edit \(call)")]))
                    record = try await client.call(ProfileContract.modify, .init(accountId: accountId, modifications: modifications))
                    version += 1
                    biography = "edit \(call)"
                }
                guard record.version == version, record.details[identifier: "biography"] == .string(biography) else {
                    report.failure = "\(accountId) call \(call): version \(record.version) \(String(describing: record.details[identifier: "biography"])), expected \(version) \(biography)"
                    return report
                }
                report.answered += 1
                if sigterm.isSet {
                    report.answeredAfterSIGTERM += 1
                }
            } catch let error as WireError where error.code == WireError.Code.shuttingDown || error.code == WireError.Code.serviceUnavailable {
                report.refusal = error.code.rawValue
                return report
            } catch {
                report.failure = "\(accountId) call \(call) (\(isLoad ? "load" : "modify")): \(error)"
                return report
            }
        }
    }

    /// Polls until nothing listens on `port` any more (the wire server has begun its shutdown).
    static func waitUntilNotListening(port: Int, seconds: Int = 30) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while await Self.isListening(port: port) {
            guard ContinuousClock.now < deadline else {
                throw KontoProcessTestTimeout(what: "the service to stop listening")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Polls until a session waits for the lock on `profile.accounts`: a request the service accepted is then
    /// provably in flight, held by the test's lock.
    static func waitForLockWaiters(_ connection: PostgresConnection, seconds: Int = 30) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            let rows = try await connection.query(
                "SELECT count(*)::int8 FROM pg_locks WHERE NOT granted AND relation = 'profile.accounts'::regclass",
                logger: ProfileServiceHarness.logger
            )
            var waiting: Int64 = 0
            for try await count in rows.decode(Int64.self) {
                waiting = count
            }
            if waiting > 0 {
                return
            }
            guard ContinuousClock.now < deadline else {
                throw KontoProcessTestTimeout(what: "a request to wait for the table lock")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    struct KontoProcessTestTimeout: Error, CustomStringConvertible {
        var what: String
        var description: String { "timed out waiting for \(what)" }
    }

    static let callers = 16
    static let clients = 4

    @Test("SIGTERM with requests in flight against PostgreSQL: every accepted request gets its real answer, and it exits 0")
    func drainsAcceptedRequestsOnSIGTERM() async throws {
        try await TestDatabase.withFreshDatabase(logger: ProfileServiceHarness.logger) { database in
            let port = try FreePort.loopback()
            var environment = try Self.environment(port: port, database: database)
            // Requests wait for the test's lock, never for their own timeout.
            environment["KONTO_PROFILE_DB_TIMEOUT_MS"] = "60000"
            // The test itself holds the lock until the listener has closed, which a loaded machine can make slow:
            // the drain must not give up on the accepted requests meanwhile.
            environment["KONTO_PROFILE_SHUTDOWN_GRACE_SECONDS"] = "120"
            let process = try ServiceProcess.start(try ServiceProcess.executable(named: "konto-profile"), environment: environment)
            let logger = ProfileServiceHarness.logger
            let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
            let locker = try await PostgresConnection.connect(on: eventLoop, configuration: database.connectionConfiguration, id: 1, logger: logger)
            let observer = try await PostgresConnection.connect(on: eventLoop, configuration: database.connectionConfiguration, id: 2, logger: logger)
            do {
                // The callers load and modify as the Gateway does; Identity creates their profiles.
                let creator = Self.client(port: port)
                let clients = (0..<Self.clients).map { _ in
                    var configuration = WireClient.Configuration(port: port, serviceName: WireAllowList.gateway, serverName: ProfileContract.serviceName, secret: WireSecret(Self.secret))
                    configuration.backoff.maximum = .milliseconds(500)
                    configuration.requestTimeout = .seconds(30)
                    configuration.connectTimeout = .seconds(15)  // the whole suite's load can push a handshake past production's 3 s
                    return WireClient(configuration: configuration, logger: logger)
                }
                let sigterm = Flag()
                let reports = try await RunningServices.with(clients + [creator], logger: logger) {
                    for client in clients + [creator] {
                        _ = try await Eventually.answer { try await client.call(HealthContract.check, .init()) }
                    }
                    for caller in 0..<Self.callers {
                        var details = AccountDetails()
                        details[\.name] = PersonName(givenName: "Caller", familyName: "\(caller)")
                        details[identifier: "biography"] = .string("start")
                        _ = try await creator.call(ProfileContract.create, .init(accountId: "caller-\(caller)", details: details))
                    }
                    return try await withThrowingTaskGroup(of: CallerReport.self) { group in
                        for caller in 0..<Self.callers {
                            let client = clients[caller % Self.clients]
                            group.addTask {
                                await Self.callInLoop(client, accountId: "caller-\(caller)", startsWithModify: caller % 2 == 1, sigterm: sigterm)
                            }
                        }
                        // Every load and modify reads the table first: with it locked, the callers' requests stay
                        // in the service's hands until the test lets go.
                        try await locker.query("BEGIN", logger: logger)
                        try await locker.query("LOCK TABLE profile.accounts IN ACCESS EXCLUSIVE MODE", logger: logger)
                        try await Self.waitForLockWaiters(observer)
                        sigterm.set()
                        process.signal(SIGTERM)
                        // The wire server has closed its listener and sent goaway; the database parts must still
                        // be there for the requests it accepted.
                        try await Self.waitUntilNotListening(port: port)
                        try await locker.query("ROLLBACK", logger: logger)
                        return try await group.reduce(into: [CallerReport]()) { $0.append($1) }
                    }
                }
                let status = await process.waitForExit(timeout: .seconds(30))
                let failures = reports.compactMap(\.failure)
                #expect(failures.isEmpty, "accepted requests without their answer: \(failures)")
                // The requests held by the lock at SIGTERM were answered during the drain.
                #expect(reports.map(\.answeredAfterSIGTERM).reduce(0, +) > 0, "reports: \(reports)")
                #expect(status == 0, "konto-profile output: \(process.output)")
            } catch {
                try? await locker.close()
                try? await observer.close()
                await process.stop()
                throw error
            }
            try? await locker.close()
            try? await observer.close()
            await process.stop()
        }
    }
}

// MARK: Start before the database

extension ProfileProcessTests {
    /// Polls until the process has logged `message`.
    static func waitForOutput(_ process: ServiceProcess, containing message: String, seconds: Int = 60) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !process.output.contains(message) {
            guard ContinuousClock.now < deadline else {
                throw KontoProcessTestTimeout(what: "\"\(message)\" in the output: \(process.output)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Whether something accepts connections on `port` now.
    static func isListening(port: Int) async -> Bool {
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: port).get()
            try? await channel.close()
            return true
        } catch {
            return false
        }
    }

    @Test("with PostgreSQL down at start it retries its migrations without listening, then serves once it is up; SIGTERM while it waits stops it", arguments: [true, false])
    func startsBeforeTheDatabase(databaseComesBack: Bool) async throws {
        let cluster = try await TemporaryPostgresCluster.start()
        let port = try FreePort.loopback()
        var process: ServiceProcess?
        do {
            let database = try await TestDatabase.createDatabase(on: cluster.maintenanceDatabase, logger: ProfileServiceHarness.logger)
            try await cluster.stop()
            var environment = try Self.environment(port: port, database: database)
            // The debug log says when the migrations step has started (its attempts wait on the pool, which keeps
            // trying to connect, so a failed attempt may take a minute to be logged).
            environment["KONTO_LOG_LEVEL"] = "debug"
            let started = try ServiceProcess.start(try ServiceProcess.executable(named: "konto-profile"), environment: environment)
            process = started
            try await Self.waitForOutput(started, containing: "component setup starting")
            #expect(started.isRunning)
            // Callers fail fast (connection refused) rather than reach a service without its schema.
            #expect(await !Self.isListening(port: port))
            if databaseComesBack {
                try await cluster.start()
                let client = Self.client(port: port)
                try await RunningServices.with([client], logger: ProfileServiceHarness.logger) {
                    let health = try await Eventually.answer { try await client.call(HealthContract.check, .init()) }
                    #expect(health.status == .ready)
                    var details = AccountDetails()
                    details[\.name] = PersonName(givenName: "Ada", familyName: "Lovelace")
                    let created = try await client.call(ProfileContract.create, .init(accountId: "acc-1", details: details))
                    #expect(created.version == 1)
                }
            }
            started.signal(SIGTERM)
            let status = await started.waitForExit(timeout: .seconds(30))
            #expect(status == 0, "konto-profile output: \(started.output)")
        } catch {
            await process?.stop()
            try? await cluster.destroy()
            throw error
        }
        await process?.stop()
        try await cluster.destroy()
    }
}

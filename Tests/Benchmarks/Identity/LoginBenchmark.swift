import ArgumentParser
import Dispatch
import Foundation
import IdentityService
import KontoContracts
import KontoModel
import KontoPostgres
import KontoTestSupport
import KontoWire
import Logging
import NIOCore
import PostgresNIO
import ProfileService
import Synchronization

/// `konto-bench login`: password logins per second over the wire (Identity and Profile on PostgreSQL, in this
/// process) at 2 and 8 concurrent clients, next to the raw argon2id rate of the same parameters on as many threads
/// as the service hashes with, measured in the same run. Then the median time of 200 logins for unknown users and
/// 200 with a wrong password, which must not tell the two apart. Last, the audit log's cost: 8-client logins with
/// Identity's audit rows kept and discarded (a trigger in the baseline), alternating three times each.
struct LoginBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Identity logins/s vs the raw argon2id hash rate; unknown-user vs wrong-password timing (loopback)."
    )

    static let secret = "konto-bench-login-secret-0123456789abcdef"
    static let password = "correct horse battery staple"
    /// Keycloak's sizing guide: 15 password-based logins per second per vCPU, with its default hashing
    /// (argon2id, 7 MiB, 5 iterations, parallelism 1, since Keycloak 25).
    static let keycloakLoginsPerCore = 15.0
    static let keycloakHash = "argon2id m=7168 KiB t=5 p=1"

    @Option(help: "Seconds measured per phase.")
    var seconds: Int = 5

    @Option(help: "Accounts logged in round-robin (and used for the timing comparison).")
    var accounts: Int = 200

    @Option(name: .customLong("memory-kib"), help: "argon2id memory in KiB (OWASP's minimum: 19456).")
    var memoryKiB: UInt32 = Argon2Parameters.owaspMinimum.memoryKiB

    @Option(help: "argon2id iterations.")
    var iterations: UInt32 = Argon2Parameters.owaspMinimum.iterations

    @Flag(help: "Every account has a TOTP second factor: a login is the password's challenge, then the app's code.")
    var totp = false

    @Option(help: "Hashing threads of the service, and of the raw-rate baseline.")
    var threads: Int = System.coreCount

    func run() async throws {
        guard (1...60).contains(seconds), (10...10_000).contains(accounts), (1...64).contains(threads) else {
            throw ValidationError("bounded runs only: seconds 1–60, accounts 10–10,000, threads 1–64")
        }
        let parameters = Argon2Parameters(memoryKiB: memoryKiB, iterations: iterations, parallelism: 1)
        let logger = {
            var logger = Logger(label: "konto.bench")
            logger.logLevel = .error
            return logger
        }()
        let cluster = try await TemporaryPostgresCluster.start(logger: logger)
        do {
            let database = try await TestDatabase.createDatabase(on: cluster.maintenanceDatabase, logger: logger)
            let settings = PostgresSettings(
                host: database.host, port: database.port, username: database.username, password: database.password, database: database.database
            )
            let profile = try ProfileServer(configuration: ProfileServiceConfiguration(port: 0, secret: WireSecret(Self.secret), database: settings), logger: logger)
            try await RunningServices.with([profile], logger: logger) {
                var configuration = IdentityServiceConfiguration(
                    port: 0,
                    secret: WireSecret(Self.secret),
                    database: settings,
                    profilePort: try await profile.localAddress().port!,
                    hashing: PasswordHashingPool.Configuration(parameters: parameters, threads: threads, maxQueued: 1_024)
                )
                configuration.options.throttle = ThrottlePolicy(threshold: 1_000_000)
                let identity = try IdentityServer(configuration: configuration, logger: logger)
                try await RunningServices.with([identity], logger: logger) {
                    let port = try await identity.localAddress().port!
                    try await measure(port: port, parameters: parameters, postmaster: cluster.postmasterPID, database: database, logger: logger)
                }
            }
        } catch {
            try? await cluster.destroy()
            throw error
        }
        try await cluster.destroy()
    }

    private func measure(port: Int, parameters: Argon2Parameters, postmaster: pid_t?, database: PostgresTestDatabase, logger: Logger) async throws {
        let users = (1...accounts).map { "user\($0)@example.com" }
        let setup = Self.client(port: port, connections: 8, logger: logger)
        let apps = TOTPApps()
        let totp = self.totp
        try await RunningServices.with([setup], logger: logger) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, user) in users.enumerated() {
                    if index >= 8 { try await group.next() }
                    group.addTask {
                        let signedUp = try await setup.call(IdentityContract.signUp, IdentitySignUpRequest(
                            userId: user, password: SecretString(Self.password), details: AccountDetails(values: ["email": .string(user), "name": .object(["givenName": .string(user)])])
                        ))
                        guard totp else { return }
                        // Enrolled within the sign-up's privileged window, confirmed with the app's first code.
                        let enrolment = try await setup.call(IdentityContract.enrollTOTP, IdentitySecuredRequest(token: signedUp.session.token))
                        apps.add(user, secret: enrolment.secret.value)
                        let code = try apps.nextCode(user)
                        _ = try await setup.call(IdentityContract.confirmTOTP, IdentityConfirmFactorRequest(token: signedUp.session.token, factorId: enrolment.factorId, code: SecretString(code)))
                    }
                }
                try await group.waitForAll()
            }
        }
        // The raw rate is measured before and after each login phase and averaged, as the other benchmarks
        // alternate with their baselines: the VM's speed drifts by ±20% within minutes.
        var raws = [try Self.rawVerifyRate(parameters: parameters, threads: threads, seconds: seconds)]
        var rates: [(clients: Int, perSecond: Double, raw: Double)] = []
        // Where a login's CPU goes, over the 8-client phase: this process (Identity, Profile, the hashing threads and
        // the client) and PostgreSQL (postmaster and backends), from /proc.
        var cpu: (process: Double, postgres: Double) = (0, 0)
        for clients in [2, 8] {
            let groups: [(String, [pid_t])] = [("process", [getpid()]), ("postgres", postmaster.map(ProcessCPU.family(of:)) ?? [])]
            let before = ProcessCPU.Snapshot(groups, loadGenerator: false)
            let started = ContinuousClock.now
            let rate = try await loginRate(port: port, clients: clients, users: users, apps: totp ? apps : nil, logger: logger)
            let elapsed = ContinuousClock.now - started
            let logins = Int(rate * (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
            let perLogin = ProcessCPU.Snapshot(groups, loadGenerator: false).microsecondsPerRequest(since: before, requests: logins)
            if clients == 8 { cpu = (perLogin["process"] ?? 0, perLogin["postgres"] ?? 0) }
            raws.append(try Self.rawVerifyRate(parameters: parameters, threads: threads, seconds: seconds))
            rates.append((clients, rate, (raws[raws.count - 2] + raws[raws.count - 1]) / 2))
        }
        let raw = raws.sorted()[raws.count / 2]
        let (unknown, wrong) = try await failureTimings(port: port, users: users, logger: logger)
        let audit = try await auditCost(port: port, users: users, apps: totp ? apps : nil, postmaster: postmaster, database: database, logger: logger)
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        print("password logins\(totp ? " with a TOTP second factor (challenge, then code)" : "") over the wire (Identity + Profile on PostgreSQL) vs raw argon2id verifications, \(parameters), \(threads) hashing threads, \(Int(cores)) cores, \(seconds) s each")
        print("  raw argon2id verify rate:        " + raws.map { String(format: "%.1f", $0) }.joined(separator: " / ") + " /s (before, between, after)")
        for (clients, rate, around) in rates {
            print(String(format: "  logins/s at %d clients:           %8.1f /s  (%.2f× the raw rate around it, %.1f per core)", clients, rate, rate / around, rate / cores))
        }
        print(String(format: "  Keycloak's sizing guide:         %8.1f per vCPU with %@", Self.keycloakLoginsPerCore, Self.keycloakHash))
        print(String(format: "  median login, unknown user:      %8.2f ms (%d logins)", unknown, accounts))
        print(String(format: "  median login, wrong password:    %8.2f ms (%d logins)", wrong, accounts))
        // One verification's CPU on a saturated pool: the hashing threads' CPU over the raw rate.
        let hashMicroseconds = Double(threads) / max(raw, 0.001) * 1_000_000
        print(String(
            format: "  CPU per login (8 clients):       %8.0f µs in this process (Identity, Profile, client, hashing: one hash ≈ %.0f µs), %.0f µs in PostgreSQL",
            cpu.process, hashMicroseconds, cpu.postgres
        ))
        print(String(
            format: "  audit log (8 clients, 3 rounds):  %8.2f ms per login with, %.2f ms without (%+.1f%%); PostgreSQL CPU %.0f µs with, %.0f µs without",
            audit.with * 1_000, audit.without * 1_000, audit.overhead * 100, audit.postgresWith, audit.postgresWithout
        ))
        let best = rates.map { $0.perSecond / $0.raw }.max() ?? 0
        let at8 = rates.first { $0.clients == 8 }?.perSecond ?? 0
        let at2 = rates.first { $0.clients == 2 }?.perSecond ?? 0
        print(String(
            format: "konto-bench login: ratio=%.2f target=0.9 raw_per_s=%.1f logins_per_s_2=%.1f logins_per_s_8=%.1f per_core=%.1f keycloak_per_core=%.0f unknown_ms=%.2f wrong_ms=%.2f timing_gap=%.3f timing_target=0.05 memory_kib=%d iterations=%d totp=%@ cpu_process_us=%.0f cpu_postgres_us=%.0f hash_us=%.0f audit_overhead=%.3f audit_target=0.05 audit_ms=%.2f no_audit_ms=%.2f",
            best, raw, at2, at8, max(at2, at8) / cores, Self.keycloakLoginsPerCore, unknown, wrong, abs(unknown - wrong) / max(unknown, wrong),
            Int(parameters.memoryKiB), Int(parameters.iterations), totp ? "yes" : "no", cpu.process, cpu.postgres, hashMicroseconds,
            audit.overhead, audit.with * 1_000, audit.without * 1_000
        ))
    }

    /// argon2id verifications per second on `threads` threads, for `seconds`.
    static func rawVerifyRate(parameters: Argon2Parameters, threads: Int, seconds: Int) throws -> Double {
        let hasher = PasswordHasher(parameters: parameters)
        let hash = try hasher.hash(password)
        let done = Atomic(0)
        let start = ContinuousClock.now
        let end = start + .seconds(seconds)
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            while ContinuousClock.now < end {
                precondition(hasher.verify(password, against: hash))
                done.add(1, ordering: .relaxed)
            }
        }
        let elapsed = ContinuousClock.now - start
        return Double(done.load(ordering: .relaxed)) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// Successful logins per second with `clients` callers, each with one login outstanding.
    private func loginRate(port: Int, clients: Int, users: [String], apps: TOTPApps?, logger: Logger) async throws -> Double {
        let client = Self.client(port: port, connections: clients, logger: logger)
        return try await RunningServices.with([client], logger: logger) {
            let end = ContinuousClock.now + .seconds(seconds)
            let start = ContinuousClock.now
            let total = try await withThrowingTaskGroup(of: Int.self) { group in
                for caller in 0..<clients {
                    group.addTask {
                        var count = 0
                        var index = caller
                        while ContinuousClock.now < end {
                            let user = users[index % users.count]
                            let answer = try await client.call(IdentityContract.login, IdentityLoginRequest(userId: user, password: SecretString(Self.password)))
                            var session = answer.accountSession
                            if let apps, let challenge = answer.challenge {
                                session = try await client.call(IdentityContract.completeSecondFactor, IdentitySecondFactorRequest(
                                    challenge: challenge.token, code: SecretString(try apps.nextCode(user))
                                ))
                            }
                            guard let session, session.details.userId == user else {
                                throw ValidationError("login answered for \(session?.accountId ?? "no session")")
                            }
                            count += 1
                            index += clients
                        }
                        return count
                    }
                }
                return try await group.reduce(0, +)
            }
            let elapsed = ContinuousClock.now - start
            return Double(total) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
    }

    /// What the audit log adds to a login: seconds per login (the inverse of the 8-client rate) with the audit rows kept
    /// and with them discarded by a `BEFORE INSERT` trigger returning NULL (the statements still run: what is saved is
    /// the rows, their indexes and their sealing), three rounds each, alternating which goes first; medians.
    private func auditCost(
        port: Int, users: [String], apps: TOTPApps?, postmaster: pid_t?, database: PostgresTestDatabase, logger: Logger
    ) async throws -> (with: Double, without: Double, overhead: Double, postgresWith: Double, postgresWithout: Double) {
        let discard = """
            CREATE OR REPLACE FUNCTION identity.bench_discard_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
            DROP TRIGGER IF EXISTS bench_discard_audit ON identity.audit_log;
            CREATE TRIGGER bench_discard_audit BEFORE INSERT ON identity.audit_log FOR EACH ROW EXECUTE FUNCTION identity.bench_discard_audit();
            """
        let keep = "DROP TRIGGER IF EXISTS bench_discard_audit ON identity.audit_log;"
        var with: [(Double, Double)] = []
        var without: [(Double, Double)] = []
        for round in 0..<3 {
            for discarding in round % 2 == 0 ? [true, false] : [false, true] {
                try await Self.execute(discarding ? discard : keep, on: database, logger: logger)
                let groups: [(String, [pid_t])] = [("postgres", postmaster.map(ProcessCPU.family(of:)) ?? [])]
                let before = ProcessCPU.Snapshot(groups, loadGenerator: false)
                let started = ContinuousClock.now
                let rate = try await loginRate(port: port, clients: 8, users: users, apps: apps, logger: logger)
                let elapsed = ContinuousClock.now - started
                let logins = Int(rate * (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
                let postgres = ProcessCPU.Snapshot(groups, loadGenerator: false).microsecondsPerRequest(since: before, requests: logins)["postgres"] ?? 0
                if discarding { without.append((1 / rate, postgres)) } else { with.append((1 / rate, postgres)) }
            }
        }
        try await Self.execute(keep, on: database, logger: logger)
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        let (withTime, withoutTime) = (median(with.map(\.0)), median(without.map(\.0)))
        return (withTime, withoutTime, withTime / withoutTime - 1, median(with.map(\.1)), median(without.map(\.1)))
    }

    /// Runs SQL statements (separated by `;` at a line's end) on a connection of their own.
    static func execute(_ sql: String, on database: PostgresTestDatabase, logger: Logger) async throws {
        let connection = try await PostgresConnection.connect(configuration: database.connectionConfiguration, id: 1, logger: logger)
        do {
            for statement in sql.split(separator: ";\n") where !statement.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                try await connection.query(PostgresQuery(unsafeSQL: String(statement)), logger: logger)
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }

    /// Median milliseconds of one login at a time: unknown users and wrong passwords, alternating.
    private func failureTimings(port: Int, users: [String], logger: Logger) async throws -> (unknown: Double, wrong: Double) {
        let client = Self.client(port: port, connections: 1, logger: logger)
        return try await RunningServices.with([client], logger: logger) {
            var unknown: [Double] = []
            var wrong: [Double] = []
            for (index, user) in users.enumerated() {
                for (target, isUnknown) in [("ghost\(index)@example.com", true), (user, false)] {
                    let start = ContinuousClock.now
                    do {
                        _ = try await client.call(IdentityContract.login, IdentityLoginRequest(userId: target, password: SecretString("not the password")))
                        throw ValidationError("a wrong login succeeded")
                    } catch let error as WireError where error.code == .wrongCredentials {
                        let elapsed = ContinuousClock.now - start
                        let milliseconds = Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15
                        if isUnknown { unknown.append(milliseconds) } else { wrong.append(milliseconds) }
                    }
                }
            }
            func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
            return (median(unknown), median(wrong))
        }
    }

    static func client(port: Int, connections: Int, logger: Logger) -> WireClient {
        var configuration = WireClient.Configuration(port: port, serviceName: WireAllowList.gateway, serverName: IdentityContract.serviceName, secret: WireSecret(secret))
        configuration.connectionCount = connections
        configuration.requestTimeout = .seconds(60)
        return WireClient(configuration: configuration, logger: logger)
    }
}

/// The accounts' authenticator apps: each code is accepted once, for a later step than the last one used, within
/// one step of now; so an account signs in at most three times in a 30-second step (the steps before, of and after).
final class TOTPApps: Sendable {
    private let state = Mutex<[String: (secret: String, lastStep: Int64)]>([:])

    func add(_ user: String, secret: String) {
        state.withLock { $0[user] = (secret, Int64.min) }
    }

    /// The app's code for the next step this account may use.
    func nextCode(_ user: String) throws -> String {
        let date = Date()
        let now = Int64(date.timeIntervalSince1970) / 30
        let (secret, step) = try state.withLock { state throws -> (String, Int64) in
            guard let app = state[user] else { throw ValidationError("no app for \(user)") }
            let step = max(app.lastStep == .min ? now - 1 : app.lastStep + 1, now - 1)
            guard step <= now + 1 else { throw ValidationError("\(user) used its codes of this step: give more --accounts") }
            state[user]?.lastStep = step
            return (app.secret, step)
        }
        guard let code = TOTPTestCode.code(base32Secret: secret, at: date, offset: step - now) else { throw ValidationError("a secret that is not base32") }
        return code
    }
}

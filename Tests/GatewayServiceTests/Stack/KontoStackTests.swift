import Foundation
import KontoClient
import KontoModel
import KontoTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `konto stack` as a real process: it says where the gateway is, serves the API in memory, and Ctrl-C (SIGINT)
/// stops every service gracefully.
@Suite("konto stack", .timeLimit(.minutes(2)))
struct KontoStackTests {
    @Test("the stack comes up, serves sign-up and the account with typed keys, shows the mail it cannot send, and stops on SIGINT with exit 0")
    func stack() async throws {
        let ports = (gateway: try FreePort.loopback(), identity: try FreePort.loopback(), profile: try FreePort.loopback(), notifications: try FreePort.loopback())
        let process = try ServiceProcess.start(
            try ServiceProcess.executable(named: "konto"),
            arguments: ["stack", "--port", "\(ports.gateway)", "--identity-port", "\(ports.identity)", "--profile-port", "\(ports.profile)", "--notifications-port", "\(ports.notifications)"],
            environment: [:]
        )
        let deadline = ContinuousClock.now + .seconds(30)
        while !process.output.contains("Konto is running"), process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let output = process.output
        #expect(output.contains("Konto is running in memory at http://localhost:\(ports.gateway)"), "\(output)")
        #expect(output.contains("OpenAPI document: http://localhost:\(ports.gateway)/openapi.json"))
        #expect(output.contains("account console:  http://localhost:\(ports.gateway)/account/"))
        #expect(output.contains("export KONTO_GATEWAY=http://localhost:\(ports.gateway)"))

        let client = KontoClient(gatewayURL: "http://127.0.0.1:\(ports.gateway)")
        var details = AccountDetails()
        details[\.name] = PersonName(givenName: "Ada")
        try await client.signUp(userId: "ada@example.org", password: "correct horse battery", details: details)
        #expect(try await client.account()[\.name]?.givenName == "Ada")
        // No mail server: the sign-up's verification mail is shown with its link.
        #expect(output.contains("no mail server (KONTO_MAIL_SMTP_URL): each mail's link or code is shown here instead"))
        let deadline2 = ContinuousClock.now + .seconds(30)
        while !process.output.contains("/account/verify?token="), ContinuousClock.now < deadline2 {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(process.output.contains("mail to ada@example.org: "), "\(process.output)")
        #expect(process.output.contains("  http://localhost:\(ports.gateway)/account/verify?token="), "\(process.output)")

        process.signal(SIGINT)
        #expect(await process.waitForExit(timeout: .seconds(20)) == 0)
    }

    @Test("the stack honours the services' KONTO_* settings; an option wins over its variable; SIGTERM stops it with exit 0")
    func environment() async throws {
        let ports = (gateway: try FreePort.loopback(), identity: try FreePort.loopback(), profile: try FreePort.loopback(), notifications: try FreePort.loopback())
        let unused = try FreePort.loopback()
        let process = try ServiceProcess.start(
            try ServiceProcess.executable(named: "konto"),
            // The gateway's port from its option, the others from their variables.
            arguments: ["stack", "--port", "\(ports.gateway)"],
            environment: [
                "KONTO_GATEWAY_PORT": "\(unused)",
                "KONTO_IDENTITY_PORT": "\(ports.identity)",
                "KONTO_PROFILE_PORT": "\(ports.profile)",
                "KONTO_NOTIFICATIONS_PORT": "\(ports.notifications)",
                "KONTO_GATEWAY_CREDENTIALS_RATE_LIMIT_PER_MINUTE": "3",
                "KONTO_IDENTITY_PRIVILEGED_SECONDS": "0",
            ]
        )
        defer { process.signal(SIGKILL) }
        let deadline = ContinuousClock.now + .seconds(30)
        while !process.output.contains("Konto is running"), process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(process.output.contains("at http://localhost:\(ports.gateway)"), "\(process.output)")
        let client = KontoClient(gatewayURL: "http://127.0.0.1:\(ports.gateway)")
        try await client.signUp(userId: "ada@example.org", password: "correct horse battery", details: KontoClientTests.named("Ada"))
        // KONTO_IDENTITY_PRIVILEGED_SECONDS=0: even right after sign-up a security-related change needs the password.
        let demanded = await #expect(throws: KontoClientError.self) { try await client.changeUserId(to: "lovelace@example.org") }
        #expect(demanded?.code == "account.reauthenticationRequired")
        // KONTO_GATEWAY_CREDENTIALS_RATE_LIMIT_PER_MINUTE=3: the sign-up, the userId change (it can mail a chosen
        // address) and one login pass, the next is refused.
        try await client.logIn(userId: "ada@example.org", password: "correct horse battery")
        let limited = await #expect(throws: KontoClientError.self) { try await client.logIn(userId: "ada@example.org", password: "correct horse battery") }
        #expect(limited?.status == 429)
        // Identity listens where its variable said (the gateway reached it there).
        #expect(process.output.contains("Konto is running"))
        // SIGTERM (as a container runtime stops it) ends it as gracefully as Ctrl-C.
        process.signal(SIGTERM)
        #expect(await process.waitForExit(timeout: .seconds(20)) == 0)
    }

    @Test("the banner's example sign-up, run as printed, creates an account under the schema the stack runs with", arguments: [nil, "deploy/accounts.yaml"])
    func bannerExample(schema: String?) async throws {
        let arguments = schema.map { ["--accounts", ReadmeQuickStartTests.root.appendingPathComponent($0).path] } ?? []
        try await KontoStackProcess.with(arguments: arguments) { stack in
            let line = try #require(stack.process.output.split(separator: "\n").first { $0.contains("try: curl") }, "\(stack.process.output)")
            let command = String(line[line.range(of: "try: ")!.upperBound...])
            let run = try await ServiceProcess.run("/bin/bash", arguments: ["-c", command + " -o /dev/null -w '%{http_code}'"])
            #expect(run.standardOutput == "201", "\(command): \(run.standardOutput) \(run.standardError)")
            // Made as it says: Charles can log in with the printed password.
            try await KontoClient(gatewayURL: stack.gatewayURL).logIn(userId: "charles@example.org", password: "correct horse battery")
        }
    }

    @Test("a port in use, the gateway's or a service's, is named, and the stack exits non-zero at once", arguments: ["--port", "--identity-port", "--notifications-port"])
    func portInUse(option: String) async throws {
        let taken = try FreePort.occupied()
        defer { close(taken.descriptor) }
        var ports = ["--port": try FreePort.loopback(), "--identity-port": try FreePort.loopback(), "--profile-port": try FreePort.loopback(), "--notifications-port": try FreePort.loopback()]
        ports[option] = taken.port
        let process = try ServiceProcess.start(
            try ServiceProcess.executable(named: "konto"),
            arguments: ["stack"] + ports.sorted { $0.key < $1.key }.flatMap { [$0.key, "\($0.value)"] },
            environment: [:]
        )
        defer { process.signal(SIGKILL) }
        let status = await process.waitForExit(timeout: .seconds(20))
        #expect(status != nil && status != 0, "\(process.output)")
        let service = ["--port": "gateway", "--identity-port": "identity", "--notifications-port": "notifications"][option]!
        #expect(process.output.contains("\(service) could not listen on 127.0.0.1:\(taken.port): the address is in use"), "\(process.output)")
        #expect(!process.output.contains("Konto is running"))
    }

    @Test("SIGINT and SIGTERM stop the stack while it is still starting (its database does not answer)", arguments: [SIGINT, SIGTERM])
    func signalWhileStarting(signal: Int32) async throws {
        // A "database" that takes connections and never answers: the stack waits in its start for the migrations.
        let database = try FreePort.occupied()
        defer { close(database.descriptor) }
        let process = try ServiceProcess.start(
            try ServiceProcess.executable(named: "konto"),
            arguments: [
                "stack", "--port", "\(try FreePort.loopback())", "--identity-port", "\(try FreePort.loopback())", "--profile-port", "\(try FreePort.loopback())",
                "--notifications-port", "\(try FreePort.loopback())", "--database-url", "postgres://konto:konto@127.0.0.1:\(database.port)/konto",
            ],
            environment: [:]
        )
        defer { process.signal(SIGKILL) }
        // Starting: it has connected to the database and waits for its answer.
        let connection = try await Self.accept(database.descriptor, while: process)
        defer { close(connection) }
        process.signal(signal)
        #expect(await process.waitForExit(timeout: .seconds(20)) == 0, "\(process.output)")
        #expect(!process.output.contains("Konto is running"))
    }

    /// The first connection to the listening `descriptor`, polled (non-blocking) while `process` runs, for 30 s at most.
    static func accept(_ descriptor: Int32, while process: ServiceProcess) async throws -> Int32 {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        let deadline = ContinuousClock.now + .seconds(30)
        while process.isRunning, ContinuousClock.now < deadline {
            let connection = Glibc.accept(descriptor, nil, nil)
            if connection >= 0 { return connection }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw KontoStackProcessError(description: "konto stack never connected to its database: \(process.output)")
    }

    @Test("a bad option is refused with a message and a non-zero exit")
    func badOption() async throws {
        let process = try ServiceProcess.start(try ServiceProcess.executable(named: "konto"), arguments: ["stack", "--port", "70000"], environment: [:])
        let status = await process.waitForExit(timeout: .seconds(20))
        #expect(status != nil && status != 0)
        #expect(process.output.contains("ports are 1 to 65535"))
    }
}

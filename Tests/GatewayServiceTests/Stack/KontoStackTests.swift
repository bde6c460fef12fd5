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
    @Test("the stack comes up, serves sign-up and the account with typed keys, and stops on SIGINT with exit 0")
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
        #expect(output.contains("Konto is running in memory at http://127.0.0.1:\(ports.gateway)"), "\(output)")
        #expect(output.contains("OpenAPI document: http://127.0.0.1:\(ports.gateway)/openapi.json"))
        #expect(output.contains("account console: http://127.0.0.1:\(ports.gateway)/account/"))

        let client = KontoClient(gatewayURL: "http://127.0.0.1:\(ports.gateway)")
        var details = AccountDetails()
        details[\.name] = PersonName(givenName: "Ada")
        try await client.signUp(userId: "ada@example.org", password: "correct horse battery", details: details)
        #expect(try await client.account()[\.name]?.givenName == "Ada")

        process.signal(SIGINT)
        #expect(await process.waitForExit(timeout: .seconds(20)) == 0)
    }

    @Test("the stack honours the services' KONTO_* settings; an option wins over its variable")
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
        #expect(process.output.contains("at http://127.0.0.1:\(ports.gateway)"), "\(process.output)")
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
        process.signal(SIGINT)
        #expect(await process.waitForExit(timeout: .seconds(20)) == 0)
    }

    @Test("a bad option is refused with a message and a non-zero exit")
    func badOption() async throws {
        let process = try ServiceProcess.start(try ServiceProcess.executable(named: "konto"), arguments: ["stack", "--port", "70000"], environment: [:])
        let status = await process.waitForExit(timeout: .seconds(20))
        #expect(status != nil && status != 0)
        #expect(process.output.contains("ports are 1 to 65535"))
    }
}

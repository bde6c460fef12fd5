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

    @Test("a bad option is refused with a message and a non-zero exit")
    func badOption() async throws {
        let process = try ServiceProcess.start(try ServiceProcess.executable(named: "konto"), arguments: ["stack", "--port", "70000"], environment: [:])
        let status = await process.waitForExit(timeout: .seconds(20))
        #expect(status != nil && status != 0)
        #expect(process.output.contains("ports are 1 to 65535"))
    }
}

import Foundation
import GatewayService
import IdentityService
import KontoContracts
import Testing

/// schemathesis (PyPI, the version scripts/test.sh pins) against the served `/openapi.json` of a running stack:
/// its default checks (no 5xx, every answer as documented, valid data accepted, invalid data refused, undeclared
/// methods 405, ...) must find nothing. scripts/test.sh installs it and names it in KONTO_SCHEMATHESIS; without
/// that the test is not run.
@Suite("schemathesis against the gateway", .serialized)
struct SchemathesisTests {
    static let executable = ProcessInfo.processInfo.environment["KONTO_SCHEMATHESIS"]

    static let configuration = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Schemathesis/schemathesis.toml").path

    @Test("finds no failure", .enabled(if: executable != nil, "KONTO_SCHEMATHESIS names no schemathesis (scripts/test.sh sets it)"))
    func noFailures() async throws {
        let executable = try #require(Self.executable)
        try await GatewayHarness.withGateway(configure: { configuration in
            configuration.rateLimitPerMinute = 0
            configuration.credentialsRateLimitPerMinute = 0
        }) { gateway in
            // A session, so the routes that take one are exercised beyond their 401 (a password change or a
            // deletion during the run may end it; the later calls then test the 401s).
            let (token, _) = try await gateway.signUp("schemathesis@example.org")
            let (status, output) = try await Self.run(executable, [
                "--config-file", Self.configuration,
                "run", gateway.baseURL + "/openapi.json",
                // Loaded while other suites load the machine: a slow first answer is no failure of the API.
                "--wait-for-schema", "60",
                "--header", "Authorization: Bearer \(token)",
                "--max-examples", "25",
                "--seed", "20261123",
                "--no-color",
            ])
            #expect(status == 0, "schemathesis found failures:\n\(output.suffix(12_000))")
        }
    }

    static let adminConfiguration = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Schemathesis/schemathesis-admin.toml").path

    @Test("finds no failure in the admin API (its own listener and document, an operator key with every scope)", .enabled(if: executable != nil, "KONTO_SCHEMATHESIS names no schemathesis (scripts/test.sh sets it)"))
    func adminNoFailures() async throws {
        let executable = try #require(Self.executable)
        let key = OperatorKeyText.generate()
        // An OpenID Provider, so the clients' operations are served (not refused for want of one).
        var options = try GatewayOpenIDTests.options()
        options.bootstrapOperatorKey = key
        // Its runs without the key (or with a wrong one) are refused, not held: the valid key must keep working.
        options.throttle = ThrottlePolicy(threshold: 1_000, baseDelay: .seconds(1))
        try await GatewayHarness.withGateway(configure: { configuration in
            configuration.adminPort = 0
            configuration.adminRateLimitPerMinute = 0
        }, identityOptions: options) { gateway in
            _ = try await gateway.signUp("schemathesis@example.org")
            let admin = try #require(gateway.adminURL)
            let (status, output) = try await Self.run(executable, [
                "--config-file", Self.adminConfiguration,
                "run", admin + "/admin/v1/openapi.json",
                // Loaded while other suites load the machine: a slow first answer is no failure of the API.
                "--wait-for-schema", "60",
                "--header", "Authorization: Bearer \(key.text)",
                "--max-examples", "25",
                "--seed", "20261128",
                "--no-color",
            ])
            #expect(status == 0, "schemathesis found failures:\n\(output.suffix(12_000))")
        }
    }

    /// Runs a process to its end; its output (stdout and stderr together) read while it runs.
    static func run(_ executable: String, _ arguments: [String]) async throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = try await Task.detached { try pipe.fileHandleForReading.readToEnd() ?? Data() }.value
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}

import Foundation
import KontoTesting
#if canImport(Glibc)
import Glibc
#endif

/// `konto stack` as a real process on free loopback ports, and the `konto` binary to run commands against it, each
/// run with its own session file.
struct KontoStackProcess {
    let process: ServiceProcess
    let gatewayURL: String
    let identityPort: Int
    let executable: String
    /// A directory of this stack's own, for session files.
    let directory: String

    /// The services' shared secret the stack is started with (`konto health --wire` needs it).
    static let secret = "a test secret of more than sixteen bytes"

    static func start(arguments: [String] = []) async throws -> KontoStackProcess {
        let executable = try ServiceProcess.executable(named: "konto")
        let ports = (gateway: try FreePort.loopback(), identity: try FreePort.loopback(), profile: try FreePort.loopback(), notifications: try FreePort.loopback())
        let process = try ServiceProcess.start(
            executable,
            arguments: ["stack", "--port", "\(ports.gateway)", "--identity-port", "\(ports.identity)", "--profile-port", "\(ports.profile)", "--notifications-port", "\(ports.notifications)"] + arguments,
            environment: ["KONTO_WIRE_SECRET": secret]
        )
        let deadline = ContinuousClock.now + .seconds(30)
        while !process.output.contains("Konto is running"), process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        guard process.output.contains("Konto is running") else {
            let output = process.output
            await process.stop()
            throw KontoStackProcessError(description: "konto stack did not come up: \(output)")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("konto-cli-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return KontoStackProcess(
            process: process, gatewayURL: "http://127.0.0.1:\(ports.gateway)", identityPort: ports.identity, executable: executable, directory: directory
        )
    }

    /// The session file of one simulated user of the command (`user` tells several apart).
    func sessionFile(_ user: String = "default") -> String {
        directory + "/\(user)/sessions.json"
    }

    /// Runs `konto ARGUMENTS` against this stack with `input` as standard input.
    func konto(_ arguments: String..., input: String = "", user: String = "default") async throws -> ServiceProcess.Run {
        try await konto(arguments, input: input, user: user)
    }

    func konto(_ arguments: [String], input: String = "", user: String = "default") async throws -> ServiceProcess.Run {
        try await ServiceProcess.run(
            executable,
            arguments: arguments,
            environment: ["KONTO_GATEWAY": gatewayURL, "KONTO_SESSION_FILE": sessionFile(user)],
            input: input
        )
    }

    /// Runs `body` with a stack started for it, stopped afterwards whether or not `body` throws.
    static func with<Result>(arguments: [String] = [], _ body: (KontoStackProcess) async throws -> Result) async throws -> Result {
        let stack = try await start(arguments: arguments)
        do {
            let result = try await body(stack)
            await stack.stop()
            return result
        } catch {
            await stack.stop()
            throw error
        }
    }

    func stop() async {
        await process.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

struct KontoStackProcessError: Error, CustomStringConvertible {
    let description: String
}

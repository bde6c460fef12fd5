import Foundation
import KontoContracts
import KontoTestSupport
import KontoWire
import Testing

/// A real service process and `konto health` reading their settings where a container gets them: the port from an
/// environment file (KONTO_ENV_FILE), the keys from a secrets directory (KONTO_SECRETS_DIRECTORY), nothing of either
/// in the environment.
@Suite("Settings from files, over a real process")
struct SettingsSourcesTests {
    /// Profile's settings as files in a fresh folder: `konto.env` (`NAME=value`) and `secrets/` (a file per setting).
    static func withSettings(_ env: [String: String], secrets: [String: String], _ body: (_ environment: [String: String]) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("konto-settings-\(UUID().uuidString)")
        let directory = folder.appendingPathComponent("secrets")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("konto.env")
        try env.map { "\($0)=\($1)" }.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        for (name, value) in secrets {
            try (value + "\n").write(to: directory.appendingPathComponent(name.lowercased().replacingOccurrences(of: "_", with: "-")), atomically: true, encoding: .utf8)
        }
        try await body(["KONTO_ENV_FILE": file.path, "KONTO_SECRETS_DIRECTORY": directory.path, "KONTO_LOG_LEVEL": "error"])
    }

    @Test("Profile starts with its port from the environment file and its keys from the secrets directory; konto health finds them there too")
    func startsFromFiles() async throws {
        let port = try FreePort.loopback()
        let keys = DeploymentKeys(root: WireSecret("settings-files-" + UUID().uuidString)).environment(for: ProfileContract.serviceName)
        try await Self.withSettings(["KONTO_PROFILE_PORT": "\(port)", "KONTO_PROFILE_HOST": "127.0.0.1"], secrets: keys) { environment in
            #expect(keys.keys.allSatisfy { environment[$0] == nil })
            let profile = try ServiceProcess.start(try ServiceProcess.executable(named: "konto-profile"), environment: environment)
            defer { profile.signal(SIGKILL) }
            let konto = try ServiceProcess.executable(named: "konto")
            var last: ServiceProcess.Run?
            // Until it listens (each check waits up to a second for its answer), within 30 s.
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline, profile.isRunning {
                let run = try await ServiceProcess.run(konto, arguments: ["health", "--wire", "127.0.0.1:\(port)", "--service", "profile", "--timeout", "1"], environment: environment)
                last = run
                if run.status == 0 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(last?.status == 0, "health: \(last?.standardOutput ?? "") \(last?.standardError ?? "")\nprofile: \(profile.output)")
            #expect(last?.standardOutput.contains("profile ready") == true)
        }
    }

    @Test("a bad value in the secrets directory stops the service with exit code 2, naming the setting and not the value")
    func badValueRefused() async throws {
        let keys = DeploymentKeys(root: WireSecret("settings-files-" + UUID().uuidString)).environment(for: ProfileContract.serviceName)
        try await Self.withSettings([:], secrets: keys.merging(["KONTO_PROFILE_PORT": "seventy-four-oh-two"]) { $1 }) { environment in
            let profile = try ServiceProcess.start(try ServiceProcess.executable(named: "konto-profile"), environment: environment)
            defer { profile.signal(SIGKILL) }
            let status = await profile.waitForExit(timeout: .seconds(30))
            #expect(status == 2, "\(profile.output)")
            #expect(profile.output.contains("KONTO_PROFILE_PORT must be a whole number"))
            #expect(keys.values.allSatisfy { !profile.output.contains($0) })
        }
    }

    @Test("a secrets directory that does not exist stops the service with exit code 2, naming KONTO_SECRETS_DIRECTORY")
    func missingDirectoryRefused() async throws {
        let profile = try ServiceProcess.start(
            try ServiceProcess.executable(named: "konto-profile"),
            environment: ["KONTO_SECRETS_DIRECTORY": "/nonexistent/konto-\(UUID().uuidString)", "KONTO_LOG_LEVEL": "error"]
        )
        defer { profile.signal(SIGKILL) }
        let status = await profile.waitForExit(timeout: .seconds(30))
        #expect(status == 2, "\(profile.output)")
        #expect(profile.output.contains("KONTO_SECRETS_DIRECTORY"))
    }
}

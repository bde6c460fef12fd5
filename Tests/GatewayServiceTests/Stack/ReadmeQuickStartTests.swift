import Foundation
import KontoTesting
import Testing

/// README's quick start, run as written against a live `konto stack`, so the README cannot rot.
@Suite("README quick start", .timeLimit(.minutes(2)))
struct ReadmeQuickStartTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The fenced block after README's `quick-start` marker.
    static func quickStart() throws -> [String] {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        guard let marker = readme.range(of: "<!-- quick-start:") else { throw KontoStackProcessError(description: "README has no quick-start marker") }
        let rest = readme[marker.upperBound...]
        guard let open = rest.range(of: "```sh\n"), let close = rest[open.upperBound...].range(of: "```") else {
            throw KontoStackProcessError(description: "README's quick start has no ```sh block")
        }
        return rest[open.upperBound..<close.lowerBound].split(separator: "\n").map(String.init)
    }

    @Test("every line of the quick start succeeds in order, with the answers it promises")
    func quickStartRuns() async throws {
        let lines = try Self.quickStart()
        #expect(lines.count >= 8)
        // `swift build` is what this test run has just done; running it again inside would wait on the build lock
        // the test run holds. Every other line runs as written.
        let script = lines.filter { !$0.hasPrefix("swift build") }
        #expect(script.count == lines.count - 1)

        try await KontoStackProcess.with { stack in try await Self.run(script, against: stack) }
    }

    static func run(_ script: [String], against stack: KontoStackProcess) async throws {
        let home = stack.directory + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        // The stack listens on a free port, not 8080: KONTO_GATEWAY (which README names) says where. HOME is fresh,
        // so the session file is the one README names.
        let run = try await ServiceProcess.run(
            "/bin/bash",
            arguments: ["-euo", "pipefail", "-c", "cd '\(root.path)'\n" + script.joined(separator: "\n")],
            environment: ["KONTO_GATEWAY": stack.gatewayURL, "HOME": home, "KONTO_SESSION_FILE": "", "XDG_CONFIG_HOME": ""]
        )
        #expect(run.status == 0, "\(run.standardError)\n\(run.standardOutput)")
        #expect(run.standardError.isEmpty, "\(run.standardError)")
        let output = run.standardOutput
        #expect(output.contains("Signed up as ada@example.org (account "))
        #expect(output.contains("ada@example.org (account "))
        #expect(output.contains("dateOfBirth     1815-12-10"), "\(output)")
        #expect(output.contains("name            Ada Lovelace"), "\(output)")
        #expect(output.contains("genderIdentity  female"), "\(output)")
        #expect(output.contains(#""genderIdentity""#) == false, "\(output)")
        #expect(output.contains("Logged out."))
        #expect(output.contains("Logged in as ada@example.org"))
        #expect(output.contains("genderIdentity"))
        #expect(FileManager.default.fileExists(atPath: home + "/.config/konto/sessions.json"))
    }
}

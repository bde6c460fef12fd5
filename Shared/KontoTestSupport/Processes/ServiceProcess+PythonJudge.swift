import Foundation

extension ServiceProcess {
    /// Starts one of the tests' Python judges (`Tests/<script>`, e.g. `Mail/smtp_server.py`) with the Python of the
    /// virtual environment `scripts/test.sh` names in `pythonVariable`, and returns it with the first line of its
    /// output that starts with `readyPrefix` (how each judge says it listens, and where), once printed.
    ///
    /// - Throws: `testing.toolNotInstalled` without the variable (`tool` says what scripts/test.sh installs);
    ///   `testing.serverDidNotStart`, with its output, when it exits or prints no such line within 30 s.
    package static func startPythonJudge(
        _ script: String,
        arguments: [String],
        environment: [String: String] = [:],
        pythonVariable: String,
        tool: String,
        readyPrefix: String
    ) async throws -> (process: ServiceProcess, ready: Substring) {
        guard let python = ProcessInfo.processInfo.environment[pythonVariable] else {
            throw KontoTestingError(.toolNotInstalled, "\(pythonVariable) is not set (scripts/test.sh installs \(tool) and sets it)")
        }
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Tests/\(script)").path
        let process = try ServiceProcess.start(python, arguments: ["-u", path] + arguments, environment: environment)
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            if let ready = process.output.split(separator: "\n").first(where: { $0.hasPrefix(readyPrefix) }) {
                return (process, ready)
            }
            guard process.isRunning, ContinuousClock.now < deadline else {
                let output = process.output
                await process.stop()
                throw KontoTestingError(.serverDidNotStart, "\(script) did not start: \(output)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

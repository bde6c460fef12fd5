import ArgumentParser
import Foundation

/// A process the benchmark starts and always stops again, by its own pid.
final class ChildProcess {
    let process: Process
    let readyLine: String

    private init(process: Process, readyLine: String) {
        self.process = process
        self.readyLine = readyLine
    }

    /// Starts `executable` and waits (at most 60 s) for a line starting with `readyPrefix` or containing `readyContains`.
    static func start(_ executable: String, _ arguments: [String], readyPrefix: String?, readyContains: String? = nil) throws -> ChildProcess {
        let (process, handle) = try launch(executable, arguments)
        var pending = Data()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, process.isRunning {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            pending.append(chunk)
            for line in String(decoding: pending, as: UTF8.self).split(separator: "\n") {
                if let readyPrefix, line.hasPrefix(readyPrefix) {
                    return ChildProcess(process: process, readyLine: String(line))
                }
                if let readyContains, line.contains(readyContains) {
                    return ChildProcess(process: process, readyLine: String(line))
                }
            }
        }
        process.terminate()
        process.waitUntilExit()
        throw ValidationError("\(executable) did not become ready")
    }

    /// SIGTERM, then SIGKILL after 3 s: a child can inherit a signal mask with SIGTERM blocked
    /// from the thread that spawned it (redis-server then never sees it).
    func stop() {
        guard self.process.isRunning else { return }
        self.process.terminate()
        let deadline = Date().addingTimeInterval(3)
        while self.process.isRunning, Date() < deadline {
            usleep(20_000)
        }
        if self.process.isRunning {
            kill(self.process.processIdentifier, SIGKILL)
        }
        self.process.waitUntilExit()
    }

    static func output(_ executable: String, _ arguments: [String]) throws -> String {
        let (process, handle) = try launch(executable, arguments)
        let data = handle.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// Runs `executable` with its standard output readable through the returned handle.
    private static func launch(_ executable: String, _ arguments: [String]) throws -> (Process, FileHandle) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, pipe.fileHandleForReading)
    }

    static func which(_ name: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

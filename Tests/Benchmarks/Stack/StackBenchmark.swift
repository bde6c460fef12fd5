import ArgumentParser
import Foundation
import KontoTestSupport

/// `konto-bench stack`: how long `konto stack` (release build, in memory) takes from being spawned until the
/// gateway listens and it says so, beside the cost of spawning the same binary to do nothing (`konto --help`).
struct StackBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stack",
        abstract: "konto stack's ready time, spawn to listening (needs: swift build -c release --product konto)."
    )

    @Option(help: "Starts measured.") var runs: Int = 5

    func run() async throws {
        guard (1...50).contains(runs) else { throw ValidationError("bounded runs only") }
        let konto = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("konto").path
        guard FileManager.default.isExecutableFile(atPath: konto) else {
            throw ValidationError("needs the konto binary beside konto-bench: swift build -c release --product konto")
        }
        var baseline: [Double] = []
        var ready: [Double] = []
        for _ in 0..<runs {
            let spawned = ContinuousClock.now
            _ = try ChildProcess.output(konto, ["--help"])
            baseline.append((ContinuousClock.now - spawned) / .milliseconds(1))

            let ports = [try FreePort.loopback(), try FreePort.loopback(), try FreePort.loopback(), try FreePort.loopback()]
            let started = ContinuousClock.now
            let stack = try ChildProcess.start(
                konto,
                ["stack", "--port", "\(ports[0])", "--identity-port", "\(ports[1])", "--profile-port", "\(ports[2])", "--notifications-port", "\(ports[3])"],
                readyPrefix: "Konto is running"
            )
            ready.append((ContinuousClock.now - started) / .milliseconds(1))
            stack.stop()
        }
        let readyMedian = Self.median(ready)
        let baselineMedian = Self.median(baseline)
        print("konto stack (release, in memory): spawned to listening, \(runs) starts, \(ProcessInfo.processInfo.activeProcessorCount) cores")
        print(String(format: "  ready: median %.0f ms (%@)", readyMedian, ready.map { String(format: "%.0f", $0) }.joined(separator: ", ")))
        print(String(format: "  konto --help (spawning the binary at all): median %.0f ms", baselineMedian))
        print(String(format: "konto-bench stack: ratio=%.2f target=1.0 ready_ms=%.0f target_ms=1000 baseline_spawn_ms=%.0f runs=%d",
                     1_000 / readyMedian, readyMedian, baselineMedian, runs))
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}

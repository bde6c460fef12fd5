import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import KontoTestSupport

@Suite("Waiting for a process to exit")
struct ProcessExitTests {
    @Test("exits are waited for by event on this system")
    func waitsByEvent() {
        #expect(ProcessExit.waitsByEvent)
    }

    @Test("a process that keeps running is reported after the timeout")
    func runningProcessTimesOut() async {
        // pid 1 never exits while we run.
        #expect(await ProcessExit.wait(for: 1, timeout: .milliseconds(50)) == false)
        #expect(ProcessExit.isRunning(1))
    }

    @Test("a process that does not exist has exited")
    func missingProcess() async {
        let unused: pid_t = 4_000_000 // above the kernel's pid_max limit
        #expect(await ProcessExit.wait(for: unused, timeout: .seconds(1)))
        #expect(!ProcessExit.isRunning(unused))
    }

    @Test("a command's exit status and output come back")
    func childProcessStatus() async throws {
        let failing = try await ChildProcess.run("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"])
        #expect(failing.status == 3)
        #expect(failing.output.contains("out"))
        #expect(failing.output.contains("err"))
        await #expect(throws: KontoTestingError.self) {
            try await ChildProcess.check("/bin/sh", ["-c", "exit 1"])
        }
        await #expect(throws: KontoTestingError.self) {
            try await ChildProcess.run("/nonexistent/program", [])
        }
    }
}

@Suite("Children of the test process")
struct ChildProcessDescriptorTests {
    @Test("a child inherits no descriptor beyond standard input, output and error")
    func noInheritedDescriptors() async throws {
        // An open descriptor without close-on-exec, as a socket of a test server may be.
        let fd = open("/dev/null", O_RDONLY)
        #expect(fd > 2)
        defer { close(fd) }
        let result = try await ChildProcess.run("/bin/sh", ["-c", "ls /proc/self/fd"])
        let descriptors = result.output.split(whereSeparator: \.isNewline).compactMap { Int32($0) }
        // The shell's own `ls` reads its directory through one more descriptor; ours must not be there.
        #expect(!descriptors.contains(fd))
        #expect(descriptors.allSatisfy { $0 <= 3 })
    }
}

@Suite("Signals in children")
struct ChildProcessSignalTests {
    @Test("a child starts with no blocked signals, whatever thread starts it")
    func unblockedSignals() async throws {
        let result = try await ChildProcess.run("/bin/sh", ["-c", "grep SigBlk /proc/self/status"])
        #expect(result.output.contains("0000000000000000"), "child mask: \(result.output)")
    }

    @Test("a service process can be stopped with SIGTERM")
    func serviceStopsOnTerm() async throws {
        let process = try ServiceProcess.start("/bin/sleep", arguments: ["600"], environment: [:])
        #expect(process.isRunning)
        process.signal(SIGTERM)
        #expect(await process.waitForExit(timeout: .seconds(30)) == 128 + SIGTERM)
        await process.stop()
    }
}

import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import KontoTestSupport

@Suite("Service processes")
struct ServiceProcessTests {
    @Test("when the test process dies without stopping its services (a crash), the watchdog kills them")
    func watchdogKillsAServiceAfterACrash() async throws {
        // A stand-in owner we can kill as a crash would; reaped at once so it is not left a zombie.
        let owner = try ChildProcess.launchDetached("/bin/sleep", ["600"])
        let service = try ServiceProcess.start("/bin/sleep", arguments: ["600"], environment: [:], watching: owner)
        let watchdog = try #require(service.watchdogPID)
        #expect(service.isRunning)
        #expect(ProcessExit.isRunning(watchdog))

        kill(owner, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(owner, &status, 0)

        #expect(await service.waitForExit(timeout: .seconds(30)) == 128 + SIGKILL)
        #expect(service.watchdogPID == nil)
        #expect(!ProcessExit.isRunning(watchdog))
    }

    @Test("a service stopped by its test retires its watchdog, which kills nothing later")
    func stoppingRetiresTheWatchdog() async throws {
        let service = try ServiceProcess.start("/bin/sleep", arguments: ["600"], environment: [:])
        let watchdog = try #require(service.watchdogPID)
        await service.stop()
        #expect(!service.isRunning)
        #expect(service.watchdogPID == nil)
        #expect(!ProcessExit.isRunning(watchdog))
    }
}

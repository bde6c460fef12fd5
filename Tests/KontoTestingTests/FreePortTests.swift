import Foundation
@testable import KontoTestSupport
import Testing

@Suite("FreePort")
struct FreePortTests {
    @Test("ports are below the kernel's ephemeral range, bindable, and never handed out twice in a run")
    func distinctAndOutsideTheEphemeralRange() throws {
        let range = FreePort.candidates()
        let text = try String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)
        let ephemeralStart = try #require(text.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) })
        #expect(range.upperBound < ephemeralStart)
        #expect(range.lowerBound >= 1_024)
        let ports = try (0..<300).map { _ in try FreePort.loopback() }
        #expect(Set(ports).count == ports.count)
        #expect(ports.allSatisfy { range.contains($0) && FreePort.bindable($0) })
    }

    @Test("a port someone listens on is not bindable")
    func listenedPortIsTaken() throws {
        let (port, fd) = try FreePort.occupied()
        defer { close(fd) }
        #expect(!FreePort.bindable(port))
    }
}

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
        let port = try FreePort.loopback()
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let listening = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        } && listen(fd, 1) == 0
        #expect(listening)
        #expect(!FreePort.bindable(port))
    }
}

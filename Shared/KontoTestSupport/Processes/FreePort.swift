import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP port no one listens on right now, for a service process to bind.
///
/// Not the kernel's choice for port 0: that comes from the ephemeral range, where every outgoing connection of
/// the machine (the tests' own clients, PostgreSQL's) also takes its local port, so between this answer and the
/// service's bind a client could take it, or a test could connect to another test's server (seen as
/// `wire.authenticationFailed` and 503s under a parallel run). A random port below the ephemeral range that binds
/// now is one no client takes; the ports handed out are remembered, so two tests of one run never share one.
public enum FreePort {
    private static let handedOut = Mutex(Set<Int>())

    public static func loopback() throws -> Int {
        let range = candidates()
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<1_000 {
            let port = Int.random(in: range, using: &generator)
            let fresh = handedOut.withLock { ports in ports.insert(port).inserted }
            guard fresh else { continue }
            if bindable(port) { return port }
        }
        throw KontoTestingError(.commandFailed, "no free loopback port in \(range) after 1,000 tries")
    }

    /// Ports below the kernel's ephemeral range (net.ipv4.ip_local_port_range), above the well-known services.
    static func candidates() -> ClosedRange<Int> {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let ephemeralStart = text.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32_768
        let upper = max(ephemeralStart - 1, 20_000)
        return min(20_000, upper - 1_000)...upper
    }

    /// Whether a listening socket can bind `port` on 127.0.0.1 right now.
    static func bindable(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return bind(fd, port: port)
    }

    /// A socket listening on a free loopback port (another process's, as a program under test sees it), for tests of
    /// what a server does when its port is taken; close the descriptor to free it.
    public static func occupied() throws -> (port: Int, descriptor: Int32) {
        for _ in 0..<10 {
            let port = try loopback()
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { break }
            if bind(fd, port: port), listen(fd, 1) == 0 { return (port, fd) }
            close(fd)
        }
        throw KontoTestingError(.commandFailed, "could not listen on a free loopback port")
    }

    private static func bind(_ fd: Int32, port: Int) -> Bool {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Hosts on one machine: a Linux network namespace per host, each joined by a veth pair to a bridge that carries a
/// /24 of its own, with the test's process on the bridge's address (iproute2's `ip`; needs root, as CI has). A host
/// has its own loopback and ports, reaches the others only over the bridge, and can lose its link or every process
/// at once, as a machine does.
///
/// Names are made per network (a bridge `kb…`, namespaces `konto-…-NAME`), so runs on one machine do not meet; a
/// watchdog shell outside the test's process removes everything should that process end without ``destroy()``.
public final class VirtualNetwork: Sendable {
    public struct Host: Sendable {
        /// The name the test gave it.
        public let name: String
        /// Its network namespace.
        public let namespace: String
        /// Its address on the bridge.
        public let address: String
        /// The bridge's end of its veth pair: down is the host's cable pulled.
        let link: String
    }

    /// The address of the test's own process on the bridge (where hosts reach receivers the test runs).
    public let bridgeAddress: String
    public let hosts: [String: Host]
    private let bridge: String
    private let watchdog: Mutex<pid_t?>

    private init(bridge: String, bridgeAddress: String, hosts: [String: Host], watchdog: pid_t) {
        self.bridge = bridge
        self.bridgeAddress = bridgeAddress
        self.hosts = hosts
        self.watchdog = Mutex(watchdog)
    }

    public static let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "ip"

    /// Makes a bridge and one namespace per name in `names`, addressed .11, .12, … in a random 10.x.y.0/24.
    public static func create(hosts names: [String]) async throws -> VirtualNetwork {
        guard geteuid() == 0 else {
            throw KontoTestingError(.commandFailed, "network namespaces need root (ip netns add); CI runs the tests as root")
        }
        let tag = String(UInt32.random(in: 0 ... .max), radix: 16)
        let subnet = "10.\(UInt8.random(in: 64...254)).\(UInt8.random(in: 1...254))"
        let bridge = "kb\(tag)"
        var hosts: [String: Host] = [:]
        for (index, name) in names.enumerated() {
            hosts[name] = Host(name: name, namespace: "konto-\(tag)-\(name)", address: "\(subnet).\(11 + index)", link: "kv\(tag)\(index)")
        }
        // First, so that a test process killed during the set-up leaves nothing behind either.
        let cleanup = Self.cleanupScript(bridge: bridge, namespaces: hosts.values.map(\.namespace))
        let watchdog = try ChildProcess.launchDetached("/bin/sh", ["-c", "tail --pid=\"$KONTO_OWNER\" -f /dev/null; " + cleanup], environment: [
            "KONTO_OWNER": "\(getpid())",
        ])
        let network = VirtualNetwork(bridge: bridge, bridgeAddress: "\(subnet).1", hosts: hosts, watchdog: watchdog)
        do {
            try await ip(["link", "add", bridge, "type", "bridge"])
            try await ip(["addr", "add", "\(subnet).1/24", "dev", bridge])
            try await ip(["link", "set", bridge, "up"])
            for host in hosts.values.sorted(by: { $0.address < $1.address }) {
                let peer = host.link + "p"
                try await ip(["netns", "add", host.namespace])
                try await ip(["link", "add", host.link, "type", "veth", "peer", "name", peer])
                try await ip(["link", "set", peer, "netns", host.namespace])
                try await ip(["link", "set", host.link, "master", bridge])
                try await ip(["link", "set", host.link, "up"])
                try await ip(["-n", host.namespace, "addr", "add", "\(host.address)/24", "dev", peer])
                try await ip(["-n", host.namespace, "link", "set", peer, "up"])
                try await ip(["-n", host.namespace, "link", "set", "lo", "up"])
            }
        } catch {
            await network.destroy()
            throw error
        }
        return network
    }

    public func host(_ name: String) throws -> Host {
        guard let host = hosts[name] else { throw KontoTestingError(.commandFailed, "no host \(name) in the network") }
        return host
    }

    /// The command line that runs `executable` with `arguments` inside `host`'s namespace (`ip netns exec`, which
    /// execs it: the pid started is the program's own).
    public func command(on host: Host, _ executable: String, _ arguments: [String] = []) -> (executable: String, arguments: [String]) {
        (Self.ip, ["netns", "exec", host.namespace, executable] + arguments)
    }

    /// Pulls `host`'s cable (`up: false`) or plugs it back.
    public func setLink(of host: Host, up: Bool) async throws {
        try await Self.ip(["link", "set", host.link, up ? "up" : "down"])
    }

    /// SIGKILLs every process in `host`'s namespace at once, as a machine losing power; returns how many there were.
    @discardableResult
    public func killEveryProcess(on host: Host) async throws -> Int {
        let listed = try await ChildProcess.check(Self.ip, ["netns", "pids", host.namespace])
        let pids = listed.split(whereSeparator: \.isNewline).compactMap { pid_t($0.trimmingCharacters(in: .whitespaces)) }
        for pid in pids { kill(pid, SIGKILL) }
        return pids.count
    }

    /// Kills what still runs in the namespaces and removes them and the bridge. Safe to call more than once.
    public func destroy() async {
        _ = try? await ChildProcess.run("/bin/sh", ["-c", Self.cleanupScript(bridge: bridge, namespaces: hosts.values.map(\.namespace))])
        guard let pid = watchdog.withLock({ pid in defer { pid = nil }; return pid }) else { return }
        kill(-pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
    }

    /// Names are this type's own (hex and fixed words), never input, so they go into the script as they are.
    private static func cleanupScript(bridge: String, namespaces: [String]) -> String {
        namespaces.map { "\(ip) netns pids \($0) 2>/dev/null | xargs -r kill -KILL; \(ip) netns del \($0) 2>/dev/null; " }.joined()
            + "\(ip) link del \(bridge) 2>/dev/null; true"
    }

    private static func ip(_ arguments: [String]) async throws {
        try await ChildProcess.check(ip, arguments)
    }
}

import Foundation
import KontoContracts
import KontoWire
import Synchronization

/// konto-notifications, konto-profile, konto-identity and konto-gateway as separate processes on free loopback
/// ports: the topology of docker-compose, for end-to-end tests. Each service can be SIGKILLed and started again on
/// the same port.
public final class KontoProcessStack: Sendable {
    /// In the order they start (the order of compose's `depends_on`; each also retries what it depends on).
    public static let services = ["konto-notifications", "konto-profile", "konto-identity", "konto-gateway"]

    /// What every service is started with (ports, secret, database URLs, and the caller's additions).
    public let environment: [String: String]
    public let gatewayPort: Int
    public let wireSecret: String
    /// Operators' services Profile and Notifications accept.
    public let operators: [String]
    /// The virtual network's host the services run on (nil: this machine's loopback).
    public let host: VirtualNetwork.Host?
    private let network: VirtualNetwork?
    private let processes: Mutex<[String: ServiceProcess]>

    /// Where the gateway is reached: loopback, or the host's address on its virtual network.
    public var gatewayURL: String { "http://\(host?.address ?? "127.0.0.1"):\(gatewayPort)" }

    /// Starts the four services with every database URL set to `databaseURL` (each keeps to its own schema), and
    /// `environment` added (it wins over the defaults here).
    ///
    /// Each service is given only its own keys, derived from the stack's root ``wireSecret``, which stays in the test's
    /// process; `operators` names operators' services (`operator-…`) Profile and Notifications also accept (their
    /// keys derive from the root too).
    ///
    /// On `host` of `network` the services run in its namespace, each on its own loopback but the gateway, which
    /// listens on the host's address (as every replica of a deployment would).
    public init(
        databaseURL: String, environment additions: [String: String] = [:], operators: [String] = [], on host: VirtualNetwork.Host? = nil, of network: VirtualNetwork? = nil
    ) throws {
        let ports = (gateway: try FreePort.loopback(), identity: try FreePort.loopback(), profile: try FreePort.loopback(), notifications: try FreePort.loopback())
        let secret = "process-stack-" + UUID().uuidString
        var environment = [
            "KONTO_GATEWAY_PORT": "\(ports.gateway)",
            "KONTO_IDENTITY_PORT": "\(ports.identity)",
            "KONTO_PROFILE_PORT": "\(ports.profile)",
            "KONTO_NOTIFICATIONS_PORT": "\(ports.notifications)",
            "KONTO_WIRE_SECRET": secret,
            "KONTO_LOG_LEVEL": "error",
            "KONTO_IDENTITY_DATABASE_URL": databaseURL,
            "KONTO_PROFILE_DATABASE_URL": databaseURL,
            "KONTO_NOTIFICATIONS_DATABASE_URL": databaseURL,
        ]
        if host != nil {
            environment["KONTO_GATEWAY_HOST"] = "0.0.0.0"
        }
        environment.merge(additions) { _, addition in addition }
        let gatewayPort = Int(environment["KONTO_GATEWAY_PORT"]!) ?? ports.gateway
        // Passkeys on the stack's own origin (browsers allow WebAuthn on localhost, not on 127.0.0.1), as the dev
        // stack does.
        if environment["KONTO_WEBAUTHN_RP_ID"] == nil, environment["KONTO_WEBAUTHN_ORIGINS"] == nil {
            environment["KONTO_WEBAUTHN_ORIGINS"] = "http://localhost:\(gatewayPort)"
        }
        // Links in mail, and providers sending the browser back, lead to this stack's own console.
        if environment["KONTO_MAIL_SMTP_URL"] != nil || environment["KONTO_IDENTITY_PROVIDERS"] != nil, environment["KONTO_PUBLIC_URL"] == nil {
            environment["KONTO_PUBLIC_URL"] = "http://127.0.0.1:\(gatewayPort)"
        }
        self.environment = environment
        self.operators = operators
        self.gatewayPort = gatewayPort
        self.wireSecret = environment["KONTO_WIRE_SECRET"]!
        self.host = host
        self.network = host == nil ? nil : network
        var started: [String: ServiceProcess] = [:]
        do {
            for service in Self.services {
                started[service] = try Self.start(service, environment: environment, operators: operators, on: host, of: network)
            }
        } catch {
            for process in started.values { process.signal(SIGKILL) }
            throw error
        }
        processes = Mutex(started)
    }

    /// What `service` is started with: its own keys only (DeploymentKeys, derived from the stack's root, which stays
    /// in the test's process), as a deployment gives them, unless the caller set keys or the root for it.
    static func environment(_ environment: [String: String], for service: String, operators: [String]) -> [String: String] {
        let name = String(service.dropFirst("konto-".count))
        let own = DeploymentKeys.keyVariable(name), verifiers = DeploymentKeys.verifiersVariable(name)
        guard environment[own] == nil, environment[verifiers] == nil, let root = environment["KONTO_WIRE_SECRET"] else {
            return environment
        }
        var given = environment
        given["KONTO_WIRE_SECRET"] = nil
        given.merge(DeploymentKeys(root: WireSecret(root)).environment(for: name)) { $1 }
        if name == ProfileContract.serviceName || name == NotificationsContract.serviceName, let listed = given[verifiers] {
            let root = WireSecret(root)
            given[verifiers] = ([listed] + operators.map { "\($0):" + WireSecret.hex(root.verifierBytes(caller: $0, server: name)) }).joined(separator: ",")
        }
        return given
    }

    /// What `service` (a name of ``services``) holds: what an attacker who took that process would hold.
    public func environment(of service: String) -> [String: String] {
        Self.environment(environment, for: service, operators: operators)
    }

    /// The running process of `service` (one of ``services``).
    public func process(_ service: String) -> ServiceProcess? {
        processes.withLock { $0[service] }
    }

    /// SIGKILLs a service and waits until it is gone.
    public func kill(_ service: String) async {
        guard let process = process(service) else { return }
        process.signal(SIGKILL)
        _ = await process.waitForExit(timeout: .seconds(10))
    }

    /// Starts a service again on its port.
    public func restart(_ service: String) throws {
        let process = try Self.start(service, environment: environment, operators: operators, on: host, of: network)
        processes.withLock { $0[service] = process }
    }

    private static func start(_ service: String, environment: [String: String], operators: [String], on host: VirtualNetwork.Host?, of network: VirtualNetwork?) throws -> ServiceProcess {
        let executable = try ServiceProcess.executable(named: service)
        let given = Self.environment(environment, for: service, operators: operators)
        guard let host, let network else {
            return try ServiceProcess.start(executable, environment: given)
        }
        let command = network.command(on: host, executable)
        return try ServiceProcess.start(command.executable, arguments: command.arguments, environment: given)
    }

    /// Forgets every process after they were killed from outside (a host lost whole) and waits until each is gone.
    public func reapAll() async {
        for service in Self.services {
            _ = await process(service)?.waitForExit(timeout: .seconds(10))
        }
    }

    /// Starts every service again (after ``reapAll()``), in the order they start in.
    public func restartAll() throws {
        for service in Self.services {
            try restart(service)
        }
    }

    /// Stops every service gracefully (SIGTERM, then SIGKILL after the grace), the gateway first.
    public func stopAll() async {
        for service in Self.services.reversed() {
            await process(service)?.stop()
        }
    }

    /// The last `lines` lines of every service's log, for a failure message.
    public func logTails(lines: Int = 20) -> String {
        Self.services.map { service in
            let output = process(service)?.output ?? ""
            return "--- \(service)\n" + output.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
        }.joined(separator: "\n")
    }
}

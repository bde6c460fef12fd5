import ArgumentParser
import AsyncHTTPClient
import Foundation
import KontoClient
import KontoClientAsyncHTTPClient
import KontoContracts
import KontoRuntime
import KontoWire
import Logging
import NIOCore
import NIOHTTP1

/// `konto health`: is a service ready? The images' healthcheck (no curl in them): a wire service's `health.check`
/// (over TLS, checked against `KONTO_WIRE_TLS_CA`, when that is set), or the gateway's `/health/ready`. Over the wire
/// it proves itself with what the service's own container holds: the first of its callers' verifiers
/// (`KONTO_<SERVICE>_WIRE_VERIFIERS`; with it the check can call only that service, which lets anyone authenticated
/// ask `health.check`), or in development the root (`KONTO_WIRE_SECRET`).
struct Health: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check that a service is ready (exit 0) or not (1); unreachable: 3.",
        discussion: "--wire HOST:PORT --service NAME asks a service over the wire, proving itself with the first verifier in KONTO_<NAME>_WIRE_VERIFIERS (or, in development, with KONTO_WIRE_SECRET), over TLS when KONTO_WIRE_TLS_CA names the CA; --http URL asks a gateway's /health/ready."
    )

    @Option(help: ArgumentHelp("A service's wire address.", valueName: "host:port")) var wire: String?
    @Option(help: ArgumentHelp("The service at --wire: identity, profile or notifications.", valueName: "name")) var service: String?
    @Option(help: ArgumentHelp("A gateway's base URL.", valueName: "url")) var http: String?
    @Option(help: "Seconds to wait for the answer.") var timeout = 5
    @Flag(help: "Print nothing, only the exit status.") var quiet = false

    func validate() throws {
        guard (wire == nil) != (http == nil) else { throw ValidationError("one of --wire HOST:PORT or --http URL") }
        guard (1...300).contains(timeout) else { throw ValidationError("--timeout is 1 to 300 seconds") }
        if let wire, Self.address(wire) == nil { throw ValidationError("--wire is HOST:PORT, not '\(wire)'") }
        if wire != nil, service == nil { throw ValidationError("--wire needs --service NAME (identity, profile or notifications)") }
        if wire == nil, service != nil { throw ValidationError("--service goes with --wire") }
    }

    func run() async throws {
        let (ready, text): (Bool, String)
        do {
            if let wire, let (host, port) = Self.address(wire) {
                (ready, text) = try await Self.checkWire(host: host, port: port, service: service ?? "", timeout: .seconds(Int64(timeout)))
            } else {
                (ready, text) = try await Self.checkHTTP(http ?? "", timeout: .seconds(Int64(timeout)))
            }
        } catch let failure as CommandFailure {
            if !quiet { Output.write("konto: \(failure.message)\n", to: .standardError) }
            throw ExitCode(failure.status.rawValue)
        } catch {
            if !quiet { Output.write("konto: \(wire ?? http ?? "") is not reachable (\(error))\n", to: .standardError) }
            throw ExitCode(CommandFailure.Status.unreachable.rawValue)
        }
        if !quiet { Output.write(text + "\n", to: ready ? .standardOutput : .standardError) }
        if !ready { throw ExitCode(CommandFailure.Status.refused.rawValue) }
    }

    static func address(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (1...65_535).contains(port) else { return nil }
        let host = String(text[..<colon])
        return host.isEmpty ? nil : (host, port)
    }

    private static func checkWire(host: String, port: Int, service: String, timeout: TimeAmount) async throws -> (Bool, String) {
        // Read as the service reads its own (the environment, KONTO_ENV_FILE, KONTO_SECRETS_DIRECTORY), so the check
        // finds the keys where the container's service finds them.
        let variables: ServiceEnvironment
        do {
            variables = try await ServiceEnvironment.load()
        } catch {
            throw CommandFailure(usage: error.description)
        }
        let verifiersVariable = DeploymentKeys.verifiersVariable(service)
        let caller: String, secret: WireSecret
        if let text = variables.string(verifiersVariable) {
            switch WireVerifiers.parse(text, server: service) {
            case .success(let verifiers):
                guard let name = verifiers.callers?.first, let first = verifiers.candidates(caller: name, server: service).first else {
                    throw CommandFailure(usage: "\(verifiersVariable) lists no caller")
                }
                (caller, secret) = (name, first)
            case .failure(let error):
                throw CommandFailure(usage: "\(verifiersVariable) \(error.problem)")
            }
        } else if let root = variables.string("KONTO_WIRE_SECRET") {
            // The gateway calls every inner service, so every one holds its verifier.
            (caller, secret) = (WireAllowList.gateway, WireSecret(root))
        } else {
            throw CommandFailure(usage: "\(verifiersVariable) (or KONTO_WIRE_SECRET in development) must be set")
        }
        var configuration = WireClient.Configuration(host: host, port: port, serviceName: caller, serverName: service, secret: secret)
        if let ca = variables.string(WireTLS.caVariable) {
            do {
                try configuration.apply(WireTLS(caPath: ca))
            } catch {
                throw CommandFailure(usage: error.description)
            }
        }
        configuration.connectionCount = 1
        configuration.connectTimeout = timeout
        let client = WireClient(configuration: configuration, logger: Logger(label: "konto.health", factory: { _ in SwiftLogNoOpLogHandler() }))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await client.run() }
            defer { tasks.cancelAll() }
            let report = try await client.call(HealthContract.check, HealthCheckRequest(), timeout: timeout)
            let checks = report.checks.map { "\($0.name): \($0.status.rawValue)" + ($0.message.map { " (\($0))" } ?? "") }
            return (report.status == .ready, "\(report.service) \(report.status.rawValue)" + (checks.isEmpty ? "" : ": " + checks.joined(separator: ", ")))
        }
    }

    private static func checkHTTP(_ url: String, timeout: TimeAmount) async throws -> (Bool, String) {
        try await GatewayOptions.withHTTPClient { http in
            let client = KontoClient(gatewayURL: url, httpClient: http, timeout: timeout, maximumResponseBytes: 64 * 1024)
            do {
                let health = try await client.health()
                let services = health.services.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
                return (health.isReady, "\(url) \(health.status): " + (health.isReady ? "ready" : "not ready") + (services.isEmpty ? "" : " (\(services.joined(separator: ", ")))"))
            } catch let refusal as KontoClientError where refusal.status > 0 {
                // An answer, but no health document: not ready (1), not unreachable (3).
                return (false, "\(url) \(refusal)")
            }
        }
    }
}

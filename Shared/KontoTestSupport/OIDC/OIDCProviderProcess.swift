import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real OpenID Connect provider for tests, as a process of its own: PyPI's oidc-provider-mock
/// (Tests/OIDC/oidc_provider.py), or the Apple stand-in (Tests/OIDC/apple_standin.py) that follows Sign in with
/// Apple's documented endpoints. scripts/test.sh installs them and names their Python in `KONTO_OIDC_PYTHON`.
public final class OIDCProviderProcess: Sendable {
    public static var python: String? { ProcessInfo.processInfo.environment["KONTO_OIDC_PYTHON"] }

    /// `http://127.0.0.1:PORT`: the issuer, and where the provider is called (never `localhost`: the package takes its
    /// issuer from the Host header).
    public let issuer: String
    public let port: Int
    private let process: ServiceProcess

    private init(issuer: String, port: Int, process: ServiceProcess) {
        self.issuer = issuer
        self.port = port
        self.process = process
    }

    /// The generic provider (oidc-provider-mock).
    public static func startGeneric() async throws -> OIDCProviderProcess {
        try await start(script: "oidc_provider.py", arguments: [])
    }

    /// The Apple stand-in, checking the client secrets signed with the P-256 key whose PEM is at `publicKeyPath`.
    public static func startApple(teamId: String, keyId: String, publicKeyPath: String, clientIds: [String]) async throws -> OIDCProviderProcess {
        try await start(script: "apple_standin.py", arguments: ["--team-id", teamId, "--key-id", keyId, "--public-key", publicKeyPath] + clientIds.flatMap { ["--client-id", $0] })
    }

    private static func start(script: String, arguments: [String]) async throws -> OIDCProviderProcess {
        let (process, ready) = try await ServiceProcess.startPythonJudge(
            "OIDC/\(script)", arguments: ["--port", "0"] + arguments, pythonVariable: "KONTO_OIDC_PYTHON", tool: "oidc-provider-mock", readyPrefix: "listening "
        )
        let parts = ready.split(separator: " ")
        guard parts.count == 3, let port = Int(parts[1]) else {
            await process.stop()
            throw KontoTestingError(.serverDidNotStart, "the OpenID Connect provider said \(ready)")
        }
        return OIDCProviderProcess(issuer: String(parts[2]), port: port, process: process)
    }

    /// POSTs JSON to one of the provider's control endpoints (`/_control/…`, `/users/…` with PUT) and returns its JSON.
    @discardableResult
    public func control(_ path: String, method: String = "POST", _ body: [String: Any] = [:]) async throws -> [String: Any] {
        var request = URLRequest(url: URL(string: issuer + path)!)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if method != "GET" {
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            throw KontoTestingError(.serverDidNotStart, "\(path) answered \(status): \(String(decoding: data, as: UTF8.self))")
        }
        if data.isEmpty { return [:] }
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    /// What the provider logged.
    public var output: String { process.output }

    public func stop() async {
        await process.stop(grace: .seconds(5))
    }
}

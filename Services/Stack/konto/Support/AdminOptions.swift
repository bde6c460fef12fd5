import ArgumentParser
import Foundation
import KontoClient
import KontoClientAsyncHTTPClient

/// What every `konto admin` command that calls the admin API shares: the admin listener's URL and the operator key,
/// read from `KONTO_ADMIN_KEY` or standard input (a terminal asks without echo), never from the command line.
struct AdminOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The gateway's admin listener (default: $KONTO_ADMIN_URL, else http://127.0.0.1:8081).", valueName: "url"))
    var admin: String?

    @Flag(help: "Answer in JSON (errors too, on standard error) for scripts.")
    var json = false

    static let localAdmin = "http://127.0.0.1:8081"

    var adminURL: String {
        let url = admin ?? ProcessInfo.processInfo.environment["KONTO_ADMIN_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.localAdmin
        return url.hasSuffix("/") ? String(url.dropLast()) : url
    }

    func validate() throws {
        guard let url = URL(string: adminURL), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw ValidationError("--admin must be an http(s) URL, not '\(adminURL)'")
        }
    }

    /// The operator key: `KONTO_ADMIN_KEY`, else asked for (standard input's first line off a terminal).
    static func key() throws -> String {
        if let key = ProcessInfo.processInfo.environment["KONTO_ADMIN_KEY"], !key.isEmpty { return key }
        return try Terminal.readSecret(prompt: "Operator key: ")
    }

    /// Runs one command's work against the admin API; failures become one line (or JSON) on standard error and the
    /// exit status ``CommandFailure`` gives them.
    func perform(_ work: (KontoAdmin, Output) async throws -> Void) async throws {
        let output = Output(json: json)
        do {
            let key = try Self.key()
            try await GatewayOptions.withHTTPClient { http in
                try await work(KontoAdmin(adminURL: adminURL, key: key, httpClient: http), output)
            }
        } catch {
            var failure = CommandFailure(error, gateway: adminURL)
            if failure.status == .unreachable, failure.code == KontoClientError.Code.unreachable {
                failure.message = "the admin listener is not reachable at \(adminURL): is KONTO_GATEWAY_ADMIN_PORT set on the gateway?"
            }
            output.fail(failure)
            throw ExitCode(failure.status.rawValue)
        }
    }
}

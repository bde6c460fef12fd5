import ArgumentParser
import AsyncHTTPClient
import Foundation
import KontoClient
import KontoClientAsyncHTTPClient
import NIOCore

/// What every account command shares: which gateway, where the session is kept, and how to answer.
struct GatewayOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The gateway's URL (default: $KONTO_GATEWAY, else the local stack).", valueName: "url"))
    var gateway: String?

    @Option(help: ArgumentHelp("The session file (default: $KONTO_SESSION_FILE, else ~/.config/konto/sessions.json).", valueName: "path"))
    var sessionFile: String?

    @Flag(help: "Answer in JSON (errors too, on standard error) for scripts.")
    var json = false

    static let localStack = "http://127.0.0.1:8080"

    var gatewayURL: String {
        let url = gateway ?? Self.environment("KONTO_GATEWAY") ?? Self.localStack
        return url.hasSuffix("/") ? String(url.dropLast()) : url
    }

    var sessionPath: String {
        sessionFile ?? Self.environment("KONTO_SESSION_FILE") ?? FileSessionStore.defaultPath()
    }

    /// A variable set to the empty string counts as unset, as in most shells' idioms (`KONTO_GATEWAY= konto …`).
    private static func environment(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    func validate() throws {
        guard let url = URL(string: gatewayURL), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw ValidationError("--gateway must be an http(s) URL, not '\(gatewayURL)'")
        }
    }

    /// A person waits for the answer: a gateway that is not there is reported at once, not retried until the
    /// request's deadline as async-http-client does by default (30 s of silence on a refused connection).
    static func makeHTTPClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(10)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Runs `body` with a client of ``makeHTTPClient()``, shut down afterwards whether or not `body` throws.
    static func withHTTPClient<Result>(_ body: (HTTPClient) async throws -> Result) async throws -> Result {
        let http = makeHTTPClient()
        let result: Swift.Result<Result, any Error>
        do {
            result = .success(try await body(http))
        } catch {
            result = .failure(error)
        }
        try? await http.shutdown()
        return try result.get()
    }

    /// Runs one command's work: its failures become one line (or a JSON object) on standard error and the exit
    /// status ``CommandFailure`` gives them.
    /// `passwordOnly`: the command asked for the password alone (no userId), so a wrong one is called just that.
    func perform(passwordOnly: Bool = false, _ work: (KontoClient, Output) async throws -> Void) async throws {
        let output = Output(json: json)
        let sessions = FileSessionStore(path: sessionPath, gateway: gatewayURL)
        do {
            try await Self.withHTTPClient { http in
                // The account's list of sessions names this one as the command line's (with the host it runs on).
                let name = "konto command line on \(ProcessInfo.processInfo.hostName)"
                try await work(KontoClient(gatewayURL: gatewayURL, httpClient: http, sessions: sessions, clientName: name), output)
            }
        } catch {
            let failure = CommandFailure(error, gateway: gatewayURL, passwordOnly: passwordOnly)
            if failure.endsSession {
                try? sessions.clear()
            }
            output.fail(failure)
            throw ExitCode(failure.status.rawValue)
        }
    }
}

import Foundation
import KontoContracts
import KontoTestSupport
import KontoWire
import Logging
import NIOCore
import Synchronization
import Testing

/// When a provider no longer answers as recorded, the contract suite says which contract, example, method and field:
/// a real example replayed against a server that answers a doctored copy of its recorded response.
@Suite("Contract mismatch messages")
struct ContractMismatchMessageTests {
    static let secret = "contract-messages-secret-0123456789"
    static let logger: Logger = {
        var logger = Logger(label: "konto.contracts.test")
        logger.logLevel = .critical
        return logger
    }()

    @Test("a renamed response field is named twice: missing under its old name, unexpected under the new one")
    func renamedField() async throws {
        let differences = try await Self.replaySignUp { answer in
            var session = answer["session"] as? [String: Any] ?? [:]
            session["tokn"] = session.removeValue(forKey: "token")
            answer["session"] = session
        }
        let token = try Self.sampleToken()
        #expect(differences == [
            "identity/01-signup (identity.signUp): $.session.token: missing",
            "identity/01-signup (identity.signUp): $.session.tokn: unexpected \"\(token)\"",
        ])
    }

    @Test("a removed response field is named with its path")
    func removedField() async throws {
        let differences = try await Self.replaySignUp { answer in
            var details = answer["details"] as? [String: Any] ?? [:]
            details["email"] = nil
            answer["details"] = details
        }
        #expect(differences == ["identity/01-signup (identity.signUp): $.details.email: missing"])
    }

    @Test("a removed method is named as such")
    func removedMethod() async throws {
        let example = try Self.signUpExample()
        // A provider that does not serve the method at all answers wire.unknownMethod.
        let differences = try await Self.replay(example, on: Self.provider(serving: [:]))
        #expect(differences == ["identity/01-signup (identity.signUp): the provider has no method identity.signUp (wire.unknownMethod): removed or renamed?"])
    }

    // MARK: Helpers

    static func signUpExample() throws -> ContractExample {
        try #require(ContractExample.load(service: IdentityContract.serviceName, contractVersion: IdentityContract.version).first { $0.name == "01-signup" })
    }

    /// The token the sample answer carries (what `$capture:…:token` is sampled as).
    static func sampleToken() throws -> String {
        let sample = try #require(try ContractExample.samples(of: [signUpExample()]).first?.response)
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(sample.utf8)) as? [String: Any])
        return try #require((answer["session"] as? [String: Any])?["token"] as? String)
    }

    /// Replays the real sign-up example against a server answering its recorded response (placeholders sampled)
    /// with `doctor` applied.
    static func replaySignUp(_ doctor: @escaping @Sendable (inout [String: Any]) -> Void) async throws -> [String] {
        let example = try signUpExample()
        let sample = try #require(try ContractExample.samples(of: [example]).first?.response)
        var answer = try #require(try JSONSerialization.jsonObject(with: Data(sample.utf8)) as? [String: Any])
        doctor(&answer)
        let doctored = String(decoding: try JSONSerialization.data(withJSONObject: answer), as: UTF8.self)
        return try await replay(example, on: provider(serving: [example.method: doctored]))
    }

    static func provider(serving answers: [String: String]) -> WireServer {
        let server = WireServer(configuration: WireServer.Configuration(port: 0, serverName: "doctored", secret: WireSecret(secret)), logger: logger)
        for (method, answer) in answers {
            server.registerRaw(method) { _, _ in ByteBuffer(string: answer) }
        }
        return server
    }

    static func replay(_ example: ContractExample, on server: WireServer) async throws -> [String] {
        try await RunningServices.with([server], logger: logger) {
            let port = try await server.localAddress().port!
            let client = WireClient(configuration: WireClient.Configuration(port: port, serviceName: "contracts-test", serverName: "doctored", secret: WireSecret(secret)), logger: logger)
            return try await RunningServices.with([client], logger: logger) {
                try await ContractExample.replay([example], on: client)
            }
        }
    }
}

import Foundation
import KontoTestSupport
import KontoWire
import Logging
import NIOCore
import Synchronization
import Testing

/// Replay brings an example's `given` condition about before it (once for consecutive examples with the same one),
/// ends it after, fills `$given` values the condition supplies, and refuses a condition the provider test lacks.
@Suite("Contract conditions in a replay")
struct ContractConditionReplayTests {
    @Test("a condition holds for its examples only, once per run of them, and supplies its values")
    func conditions() async throws {
        let examples = try Self.examples([
            "01-plain": #"{"method":"probe","request":{},"response":{"down":false}}"#,
            "02-down": #"{"given":"down","method":"probe","request":{},"response":{"down":true}}"#,
            "03-down-again": #"{"given":"down","method":"probe","request":{"token":"$given:token:string"},"response":{"down":true,"token":"mailed"}}"#,
            "04-plain": #"{"method":"probe","request":{},"response":{"down":false}}"#,
        ])
        let down = Mutex((isDown: false, established: 0, ended: 0))
        let condition = ContractCondition(
            establish: { down.withLock { $0.isDown = true; $0.established += 1 } },
            end: { down.withLock { $0.isDown = false; $0.ended += 1 } },
            supply: { ["token": "mailed"] }
        )
        let differences = try await Self.replay(examples, conditions: ["down": condition]) { payload in
            var answer: [String: Any] = ["down": down.withLock { $0.isDown }]
            if let request = try JSONSerialization.jsonObject(with: Data(payload.readableBytesView)) as? [String: Any], let token = request["token"] {
                answer["token"] = token
            }
            return answer
        }
        #expect(differences.isEmpty, "\(differences)")
        #expect(down.withLock { ($0.established, $0.ended) } == (1, 1))
    }

    @Test("an example whose condition the provider test cannot bring about is an error, not skipped")
    func unsupported() async throws {
        let examples = try Self.examples(["01-down": #"{"given":"down","method":"probe","request":{},"response":{}}"#])
        let error = await #expect(throws: ContractExampleError.self) {
            try await Self.replay(examples, conditions: [:]) { _ in [:] }
        }
        #expect(error?.description == "fake/01-down (probe): the provider test cannot bring about down")
    }

    @Test("consumers get a sample for a $given value; an expected answer cannot hold one")
    func samples() throws {
        let examples = try Self.examples([
            "01": #"{"given":"mailed","method":"probe","request":{"token":"$given:token:token"},"response":{}}"#,
            "02": #"{"method":"probe","request":{},"response":{"token":"$given:token:token"}}"#,
        ])
        let sampled = try ContractExample.samples(of: [examples[0]])
        #expect(sampled.first?.request == #"{"token":"c2FtcGxlLXRva2VuLXNhbXBsZS10b2tlbi1zYW1wbGUtdG9r"}"#)
        var bindings = ContractBindings()
        #expect(throws: ContractExampleError.self) { try examples[0].request(with: bindings) }
        #expect(throws: ContractExampleError.self) { try examples[1].mismatches(inResponse: Array(#"{"token":"x"}"#.utf8), bindings: &bindings) }
    }

    // MARK: Helpers

    /// Examples of a contract `fake`, written to a temporary Tests/Contracts folder.
    static func examples(_ files: [String: String]) throws -> [ContractExample] {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("contract-conditions-\(UUID().uuidString)")
        let folder = root.appendingPathComponent("Tests/Contracts/fake")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try Data(#"{"service":"fake","contractVersion":1,"wireVersion":\#(WireProtocolVersion.current)}"#.utf8).write(to: folder.appendingPathComponent("contract.json"))
        for (name, json) in files {
            try Data(json.utf8).write(to: folder.appendingPathComponent("\(name).json"))
        }
        return try ContractExample.load(service: "fake", contractVersion: 1, filePath: root.appendingPathComponent("Tests/FakeTests/File.swift").path)
    }

    static func replay(
        _ examples: [ContractExample],
        conditions: [String: ContractCondition],
        answer: @escaping @Sendable (ByteBuffer) throws -> [String: Any]
    ) async throws -> [String] {
        let logger = ContractMismatchMessageTests.logger
        let secret = ContractMismatchMessageTests.secret
        let server = WireServer(configuration: WireServer.Configuration(port: 0, serverName: "fake", secret: WireSecret(secret)), logger: logger)
        server.registerRaw("probe") { payload, _ in
            ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: try answer(payload)))
        }
        return try await RunningServices.with([server], logger: logger) {
            let port = try await server.localAddress().port!
            let client = WireClient(configuration: WireClient.Configuration(port: port, serviceName: "conditions-test", serverName: "fake", secret: WireSecret(secret)), logger: logger)
            return try await RunningServices.with([client], logger: logger) {
                try await ContractExample.replay(examples, on: client, conditions: conditions)
            }
        }
    }
}

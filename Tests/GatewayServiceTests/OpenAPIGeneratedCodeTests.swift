import Crypto
import Foundation
import Testing

/// The server and client code generated from openapi.yaml is committed (scripts/generate-openapi.sh), not made by the
/// build plugin on every fresh build; each generated file names the SHA-256 of the document and the configuration it
/// came from, and this check fails as soon as either changed without generating again.
@Suite("Generated OpenAPI code")
struct OpenAPIGeneratedCodeTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let document = "Services/Gateway/GatewayService/openapi.yaml"
    static let marker = "// openapi-source-sha256: "

    /// What the script hashes: the document's bytes followed by the configuration's.
    static func sourceDigest(target: String) throws -> String {
        let document = try Data(contentsOf: root.appendingPathComponent(Self.document))
        let config = try Data(contentsOf: root.appendingPathComponent("\(target)/openapi-generator-config.yaml"))
        return SHA256.hash(data: document + config).map { String(format: "%02x", $0) }.joined()
    }

    static func generatedFiles(target: String) throws -> [URL] {
        let folder = root.appendingPathComponent("\(target)/Generated")
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "swift" }
    }

    @Test("every generated file comes from the current document and configuration", arguments: [
        ("Services/Gateway/GatewayService", ["Types.swift", "Server.swift"]),
        ("Client/Sources/KontoClient", ["Types.swift", "Client.swift"]),
    ])
    func current(target: String, expected: [String]) throws {
        let digest = try Self.sourceDigest(target: target)
        let files = try Self.generatedFiles(target: target)
        #expect(Set(expected).isSubset(of: Set(files.map(\.lastPathComponent))), "\(target)/Generated lacks a file")
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            let recorded = text.split(separator: "\n", maxSplits: 8).first { $0.hasPrefix(Self.marker) }
                .map { String($0.dropFirst(Self.marker.count)) }
            #expect(
                recorded == digest,
                "\(target)/Generated/\(file.lastPathComponent) is stale: run scripts/generate-openapi.sh"
            )
        }
    }

    @Test("a changed document is noticed")
    func changedDocumentNoticed() throws {
        let document = try Data(contentsOf: Self.root.appendingPathComponent(Self.document))
        let config = try Data(contentsOf: Self.root.appendingPathComponent("Client/Sources/KontoClient/openapi-generator-config.yaml"))
        let changed = SHA256.hash(data: document + Data(" ".utf8) + config).map { String(format: "%02x", $0) }.joined()
        #expect(changed != (try Self.sourceDigest(target: "Client/Sources/KontoClient")))
    }
}

import Foundation
import KontoTestSupport
import Testing

/// The client is a package of its own (`Client/`) so that an app adding it resolves no server package (issue 70, 2).
/// `Client/Examples/KontoSample` is such an app's package: what `swift package show-dependencies` lists for it is the
/// whole of what an app pulls in.
@Suite("The client's package, as an app adds it")
struct ClientPackageTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every package identity below `node` in `show-dependencies --format json`'s tree.
    static func identities(_ node: [String: Any]) -> Set<String> {
        var found: Set<String> = []
        for child in node["dependencies"] as? [[String: Any]] ?? [] {
            if let identity = child["identity"] as? String { found.insert(identity) }
            found.formUnion(identities(child))
        }
        return found
    }

    @Test("a sample app's package resolves the client, swift-openapi-runtime, swift-openapi-urlsession, swift-http-types and swift-collections: no server package (NIO, async-http-client, postgres-nio, hummingbird …)")
    func resolvesNoServerPackage() async throws {
        let sample = Self.root.appendingPathComponent("Client/Examples/KontoSample").path
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("konto-sample-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let run = try await ServiceProcess.run(
            "/usr/bin/env", arguments: ["swift", "package", "--package-path", sample, "--scratch-path", scratch, "show-dependencies", "--format", "json"]
        )
        #expect(run.status == 0, "\(run.standardError.suffix(2_000))")
        // The tree is the JSON document in the output (resolution may print lines before it).
        let text = run.standardOutput
        let json = try #require(text.firstIndex(of: "{").map { String(text[$0...]) })
        let tree = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(Self.identities(tree) == ["client", "swift-openapi-runtime", "swift-openapi-urlsession", "swift-http-types", "swift-collections"])
    }

    @Test("the client's manifest declares iOS 17 and macOS 14, and the server package depends on it by path")
    func manifest() throws {
        let client = try String(contentsOf: Self.root.appendingPathComponent("Client/Package.swift"), encoding: .utf8)
        #expect(client.contains("platforms: [.iOS(.v17), .macOS(.v14)]"))
        for server in ["swift-nio", "async-http-client", "postgres-nio", "hummingbird"] {
            #expect(!client.contains("/\(server).git"), "the client's manifest names \(server)")
        }
        let root = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(root.contains(#".package(path: "Client")"#))
    }
}

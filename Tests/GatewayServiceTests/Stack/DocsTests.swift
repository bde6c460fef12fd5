import Foundation
import KontoTesting
import Testing

/// README.md and docs/ as a reader meets them in a clone: every shell block marked runnable works against a live
/// `konto stack`, and every path they name is in the repository (a user's clone has nothing beside it).
@Suite("Docs", .timeLimit(.minutes(2)))
struct DocsTests {
    static let root = ReadmeQuickStartTests.root

    /// README.md and every file of docs/.
    static func documents() throws -> [URL] {
        let docs = root.appendingPathComponent("docs")
        let names = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }.sorted()
        return [root.appendingPathComponent("README.md")] + names.map { docs.appendingPathComponent($0) }
    }

    /// The fenced `sh` blocks after a `<!-- runnable` marker, with where they are.
    static func runnableBlocks() throws -> [(source: String, lines: [String])] {
        var blocks: [(String, [String])] = []
        for document in try documents() {
            let text = try String(contentsOf: document, encoding: .utf8)
            var rest = text[...]
            // A marker begins its line (a mention of it in prose is none).
            while let marker = rest.range(of: "\n<!-- runnable") {
                let after = rest[marker.upperBound...]
                guard let open = after.range(of: "```sh\n"), let close = after[open.upperBound...].range(of: "\n```") else {
                    throw KontoStackProcessError(description: "\(document.lastPathComponent): a runnable marker without a ```sh block")
                }
                let line = text[..<marker.lowerBound].filter { $0 == "\n" }.count + 2
                blocks.append(("\(document.lastPathComponent):\(line)", after[open.upperBound..<close.lowerBound].components(separatedBy: "\n")))
                rest = after[close.upperBound...]
            }
        }
        return blocks
    }

    @Test("every shell block marked runnable succeeds as written against a live konto stack")
    func runnableBlocksRun() async throws {
        let blocks = try Self.runnableBlocks()
        #expect(!blocks.isEmpty)
        try await KontoStackProcess.with { stack in
            for (index, block) in blocks.enumerated() {
                let directory = stack.directory + "/block-\(index)"
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                let run = try await ServiceProcess.run(
                    "/bin/bash", arguments: ["-euo", "pipefail", "-c", "cd '\(directory)'\n" + block.lines.joined(separator: "\n")],
                    environment: ["KONTO_GATEWAY": stack.gatewayURL, "HOME": directory]
                )
                #expect(run.status == 0, "\(block.source): \(run.standardError)\n\(run.standardOutput)")
            }
        }
    }

    /// Paths the deployment makes (deploy/make-tls.sh) rather than the repository holds.
    static let generated: Set<String> = ["deploy/tls", ".env"]

    /// Every link target (`](…)`, not a URL or an anchor) and every backticked path into the repository's top-level
    /// folders, as (document, path relative to the root).
    static func namedPaths() throws -> [(document: String, path: String)] {
        let topLevel = try FileManager.default.contentsOfDirectory(atPath: root.path).filter { !$0.hasPrefix(".") || $0 == ".ci" }
        var named: [(String, String)] = []
        for document in try documents() {
            let text = try String(contentsOf: document, encoding: .utf8)
            let directory = document.deletingLastPathComponent()
            for match in text.matches(of: /\]\(([^)\s]+)\)/) {
                let target = String(match.1)
                guard !target.contains("://"), !target.hasPrefix("#"), !target.hasPrefix("mailto:") else { continue }
                let path = String(target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0])
                let resolved = directory.appendingPathComponent(path).standardizedFileURL.path
                named.append((document.lastPathComponent, resolved.hasPrefix(root.standardizedFileURL.path + "/") ? String(resolved.dropFirst(root.standardizedFileURL.path.count + 1)) : target))
            }
            for match in text.matches(of: /`([A-Za-z0-9_.\-\/]+)`/) {
                let token = String(match.1)
                let first = token.split(separator: "/").first.map(String.init) ?? ""
                if token.hasPrefix("../") || (token.contains("/") && topLevel.contains(first)) {
                    named.append((document.lastPathComponent, token))
                }
            }
        }
        return named
    }

    @Test("every relative link and every repository path README and docs/ name exists in the clone; none points outside it")
    func pathsExist() throws {
        let named = try Self.namedPaths()
        #expect(named.count > 50)
        for (document, path) in named where !Self.generated.contains(where: { path == $0 || path.hasPrefix($0 + "/") }) {
            #expect(!path.hasPrefix("../"), "\(document) points outside the repository: \(path)")
            let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
            #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(trimmed).path), "\(document) names \(path), which is not in the repository")
        }
    }
}

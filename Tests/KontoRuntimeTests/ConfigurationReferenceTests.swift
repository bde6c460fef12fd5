import Foundation
import Testing

/// docs/CONFIGURATION.md against the code: every `KONTO_…` variable the services, the `konto` command and the test kit
/// read is documented there, and every variable documented there is read by the code, docker-compose.yml or a script,
/// so the reference can neither miss a setting nor keep a stale one.
@Suite("Configuration reference")
struct ConfigurationReferenceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Variables of the test kit's own detached clean-up scripts (passed to `/bin/sh`), not settings.
    static let internalVariables: Set<String> = ["KONTO_OWNER", "KONTO_SERVICE", "KONTO_ROOT", "KONTO_PG_CTL", "KONTO_RUNUSER"]

    static func variables(in text: String, quoted: Bool) -> Set<String> {
        let pattern = quoted ? #""(KONTO_[A-Z0-9_]*[A-Z0-9])"# : #"\b(KONTO_[A-Z0-9_]*[A-Z0-9])\b"#
        let regex = try! NSRegularExpression(pattern: pattern)
        let range = NSRange(text.startIndex..., in: text)
        return Set(regex.matches(in: text, range: range).compactMap { Range($0.range(at: 1), in: text).map { String(text[$0]) } })
    }

    static func swiftSources(under folders: [String]) throws -> String {
        var text = ""
        for folder in folders {
            let enumerator = FileManager.default.enumerator(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)
            while let url = enumerator?.nextObject() as? URL {
                guard url.pathExtension == "swift" else { continue }
                text += try String(contentsOf: url, encoding: .utf8)
            }
        }
        return text
    }

    static func file(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    @Test("every variable the code reads is in docs/CONFIGURATION.md")
    func nothingMissing() throws {
        let read = Self.variables(in: try Self.swiftSources(under: ["Services", "Shared"]), quoted: true).subtracting(Self.internalVariables)
        let documented = Self.variables(in: try Self.file("docs/CONFIGURATION.md"), quoted: false)
        #expect(read.count > 60, "the scan found the code's variables")
        #expect(read.subtracting(documented).sorted() == [], "read by the code, missing from docs/CONFIGURATION.md")
    }

    @Test("every variable in docs/CONFIGURATION.md is read by the code, the compose files or the scripts")
    func nothingStale() throws {
        var read = Self.variables(in: try Self.swiftSources(under: ["Services", "Shared"]), quoted: true)
        for path in ["docker-compose.yml", "deploy/compose.rehearsal.yml", "scripts/test.sh", ".env.example"] {
            read.formUnion(Self.variables(in: try Self.file(path), quoted: false))
        }
        let documented = Self.variables(in: try Self.file("docs/CONFIGURATION.md"), quoted: false)
        #expect(documented.subtracting(read).sorted() == [], "documented, read by no one")
    }
}

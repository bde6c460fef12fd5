import Foundation
import KontoClient
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The `konto` command's session file: one session per gateway, the owner's alone, never half written.
@Suite("FileSessionStore")
struct FileSessionStoreTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("konto-sessions-\(UUID().uuidString)").path

    static let session = KontoSession(accountId: "a1", token: "t1", expiresAt: Date(timeIntervalSince1970: 2_000_000_000), userId: "ada@example.org")

    @Test("saved, loaded and cleared per gateway; the file is 0600 in a 0700 directory")
    func roundTrip() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/nested/sessions.json"
        let local = FileSessionStore(path: path, gateway: "http://127.0.0.1:8080")
        let other = FileSessionStore(path: path, gateway: "https://accounts.example.org")
        #expect(try local.load() == nil)
        try local.save(Self.session)
        var second = Self.session
        second.token = "t2"
        try other.save(second)
        #expect(try local.load() == Self.session)
        #expect(try other.load() == second)

        #expect(try Self.permissions(path) == 0o600)
        #expect(try Self.permissions(directory + "/nested") == 0o700)
        // No temporary file is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/nested") == ["sessions.json"])

        try local.clear()
        #expect(try local.load() == nil)
        #expect(try other.load() == second)
    }

    @Test("a file others can read, a file that is not one of ours, and a symbolic link are refused")
    func refused() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/sessions.json"
        let store = FileSessionStore(path: path, gateway: "http://127.0.0.1:8080")
        try store.save(Self.session)

        chmod(path, 0o640)
        #expect(throws: KontoClientError.self) { try store.load() }
        #expect((try? store.load()) == nil)
        do {
            _ = try store.load()
        } catch let error as KontoClientError {
            #expect(error.code == KontoClientError.Code.sessionFile)
            #expect(error.detail?.contains("readable by others (mode 640)") == true)
            #expect(error.detail?.contains("t1") == false)
        }

        chmod(path, 0o600)
        try Data("not json".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        #expect(throws: KontoClientError.self) { try store.load() }

        let link = directory + "/link.json"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        #expect(throws: KontoClientError.self) { try FileSessionStore(path: link, gateway: "x").load() }
    }

    static func permissions(_ path: String) throws -> Int? {
        try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
    }

    @Test("the default path follows XDG_CONFIG_HOME, else HOME")
    func defaultPath() {
        #expect(FileSessionStore.defaultPath(environment: ["XDG_CONFIG_HOME": "/x/config", "HOME": "/home/ada"]) == "/x/config/konto/sessions.json")
        #expect(FileSessionStore.defaultPath(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/home/ada"]) == "/home/ada/.config/konto/sessions.json")
        #expect(FileSessionStore.defaultPath(environment: ["HOME": "/home/ada"]) == "/home/ada/.config/konto/sessions.json")
    }
}

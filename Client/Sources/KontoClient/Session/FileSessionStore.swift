import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps sessions in a JSON file readable and writable only by its owner (0600, in a 0700 directory), one per
/// gateway, so a command-line client stays signed in between runs and the same file can hold sessions for several
/// deployments. A file others can read is refused rather than used: a bearer token in it may have been seen.
public struct FileSessionStore: KontoSessionStore {
    public let path: String
    /// Whose session this store keeps (the gateway's base URL).
    public let gateway: String

    public init(path: String, gateway: String) {
        self.path = path
        self.gateway = gateway
    }

    /// `$XDG_CONFIG_HOME/konto/sessions.json`, else `~/.config/konto/sessions.json`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let configHome = environment["XDG_CONFIG_HOME"], configHome.hasPrefix("/") {
            return configHome + "/konto/sessions.json"
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.config/konto/sessions.json"
    }

    public func load() throws -> KontoSession? {
        try readSessions()[gateway]
    }

    public func save(_ session: KontoSession) throws {
        var sessions = try readSessions()
        sessions[gateway] = session
        try writeSessions(sessions)
    }

    public func clear() throws {
        var sessions = try readSessions()
        guard sessions.removeValue(forKey: gateway) != nil else { return }
        try writeSessions(sessions)
    }

    // MARK: The file

    private struct File: Codable {
        var sessions: [String: KontoSession]
    }

    /// Sessions never grow large; anything bigger is not this file.
    static let maximumSize = 1 << 20

    private func readSessions() throws -> [String: KontoSession] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            if errno == ENOENT { return [:] }
            throw Self.failure("cannot read the session file \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw Self.failure("cannot read the session file \(path): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & 0o077 == 0 else {
            throw Self.failure("the session file \(path) is readable by others (mode \(String(status.st_mode & 0o777, radix: 8))): remove it or `chmod 600` it")
        }
        guard status.st_uid == getuid() else {
            throw Self.failure("the session file \(path) belongs to another user")
        }
        guard Int(status.st_size) <= Self.maximumSize else {
            throw Self.failure("the session file \(path) is larger than \(Self.maximumSize) bytes")
        }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            filled += count
        }
        guard filled > 0 else { return [:] }
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return try decoder.decode(File.self, from: Data(bytes[..<filled])).sessions
        } catch {
            throw Self.failure("the session file \(path) is not a Konto session file: remove it and log in again")
        }
    }

    /// Written to a new 0600 file beside the old one and renamed over it, so a crash leaves the old or the new
    /// file, never half of one, and the token is never in a file with looser permissions.
    private func writeSessions(_ sessions: [String: KontoSession]) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw Self.failure("cannot create \(directory) for the session file")
            }
        }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(File(sessions: sessions))
        } catch {
            throw Self.failure("cannot encode the sessions")
        }
        let temporary = path + ".\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw Self.failure("cannot write the session file \(path): \(String(cString: strerror(errno)))")
        }
        var written = 0
        let complete = data.withUnsafeBytes { buffer -> Bool in
            while written < buffer.count {
                let count = write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                written += count
            }
            return true
        }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard complete, synced, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw Self.failure("cannot write the session file \(path): \(reason)")
        }
    }

    private static func failure(_ detail: String) -> KontoClientError {
        KontoClientError(code: KontoClientError.Code.sessionFile, status: 0, detail: detail)
    }
}

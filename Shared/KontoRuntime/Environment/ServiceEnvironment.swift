import Configuration
import Foundation
import Logging
import SystemPackage

/// Typed reads of a service's settings (twelve-factor configuration), through one swift-configuration `ConfigReader`.
///
/// Settings are named as environment variables (`KONTO_IDENTITY_PORT`) wherever they come from; the reader asks its
/// providers in order (``load(_:)``): the process's environment, then an environment file (`KONTO_ENV_FILE`), then a
/// secrets directory (`KONTO_SECRETS_DIRECTORY`, a file per setting as Docker and Kubernetes mount secrets).
/// Every problem names the setting; values of settings marked secret never appear in errors or logs.
public struct ServiceEnvironment: Sendable {
    private let reader: ConfigReader

    /// Settings from these variables alone (the dev stack's and the tests' way in).
    public init(_ variables: [String: String] = ProcessInfo.processInfo.environment) {
        self.init(reader: ConfigReader(provider: Self.environmentProvider(variables)))
    }

    public init(reader: ConfigReader) {
        self.reader = reader
    }

    /// The service's reader: the environment `variables` first, then the environment file `KONTO_ENV_FILE` names
    /// (`NAME=value` lines, as compose's `.env`), then the directory `KONTO_SECRETS_DIRECTORY` names, whose files are
    /// named like the settings in lowercase with dashes (`konto-wire-secret`) and hold one value each, every one
    /// treated as secret.
    /// - Throws: a ``ServiceEnvironmentError`` naming the variable whose file or directory cannot be read.
    public static func load(_ variables: [String: String] = ProcessInfo.processInfo.environment) async throws(ServiceEnvironmentError) -> ServiceEnvironment {
        let environment = environmentProvider(variables)
        var providers: [any ConfigProvider] = [environment]
        let plain = ServiceEnvironment(reader: ConfigReader(provider: environment))
        if let path = plain.string(envFileVariable) {
            do {
                providers.append(try await EnvironmentVariablesProvider(environmentFilePath: FilePath(path), secretsSpecifier: secrets))
            } catch {
                throw ServiceEnvironmentError(variable: envFileVariable, problem: "names a file that cannot be read as NAME=value lines: \(path)")
            }
        }
        if let path = plain.string(secretsDirectoryVariable) {
            do {
                providers.append(try await DirectoryFilesProvider(directoryPath: secretsDirectory(path)))
            } catch {
                throw ServiceEnvironmentError(variable: secretsDirectoryVariable, problem: "names a directory that cannot be read: \(path)")
            }
        }
        return ServiceEnvironment(reader: ConfigReader(providers: providers))
    }

    /// The directory whose regular files hold the secrets. swift-configuration's `DirectoryFilesProvider` reads
    /// regular files only (it skips symbolic links), and a Kubernetes Secret volume is symbolic links, `name ->
    /// ..data/name`, into a hidden directory the kubelet swaps on an update (`..data -> ..2026_11_27_…`): read as it is,
    /// it would give no setting at all. So where `..data` is, the directory behind it is read, whose files are the same
    /// names as regular files. (`ServiceEnvironmentProvidersTests` holds the provider on the volume itself to that.)
    static func secretsDirectory(_ path: String) -> FilePath {
        let data = URL(fileURLWithPath: path).appendingPathComponent("..data")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: data.path, isDirectory: &isDirectory), isDirectory.boolValue else { return FilePath(path) }
        return FilePath(data.resolvingSymlinksInPath().path)
    }

    public static let envFileVariable = "KONTO_ENV_FILE"
    public static let secretsDirectoryVariable = "KONTO_SECRETS_DIRECTORY"

    private static func environmentProvider(_ variables: [String: String]) -> EnvironmentVariablesProvider {
        EnvironmentVariablesProvider(environmentVariables: variables, secretsSpecifier: secrets)
    }

    /// What the reader redacts should it ever report an access: secrets, keys, passwords and database URLs (which may
    /// carry a password).
    private static let secrets = SecretsSpecifier<String, String>.dynamic { name, _ in
        ["SECRET", "KEY", "PASSWORD", "_URL", "VERIFIERS"].contains { name.uppercased().contains($0) }
    }

    /// The key a setting's name stands for: `KONTO_IDENTITY_PORT` is `konto.identity.port`, which the environment
    /// provider spells `KONTO_IDENTITY_PORT` again and the secrets directory `konto-identity-port`.
    static func key(_ name: String) -> ConfigKey {
        ConfigKey(name.lowercased().split(separator: "_", omittingEmptySubsequences: false).map(String.init))
    }

    /// The value, or nil when unset or empty.
    public func string(_ name: String) -> String? {
        guard let value = reader.string(forKey: Self.key(name)), !value.isEmpty else { return nil }
        return value
    }

    public func string(_ name: String, default defaultValue: String) -> String {
        string(name) ?? defaultValue
    }

    public func required(_ name: String, purpose: String) throws(ServiceEnvironmentError) -> String {
        guard let value = string(name) else { throw ServiceEnvironmentError(variable: name, problem: "is required (\(purpose))") }
        return value
    }

    /// A secret of at least `minimumBytes` that looks random; errors never show the value.
    ///
    /// Refused: a placeholder (`.env.example`'s `replace-…`, a `change-me`), a value shorter than `minimumBytes`, and
    /// one of too few different characters (fewer than 10, or one character making up over a quarter of it), which
    /// no generator's output is (`openssl rand -hex 32` gives 64 characters of 16 kinds).
    public func secret(_ name: String, minimumBytes: Int = 32) throws(ServiceEnvironmentError) -> String {
        let value = try required(name, purpose: "a shared secret")
        let generate = "generate one with: openssl rand -hex 32"
        let lowercased = value.lowercased()
        if Self.placeholderMarks.contains(where: lowercased.contains) {
            throw ServiceEnvironmentError(variable: name, problem: "is a placeholder, not a secret (\(generate))")
        }
        guard value.utf8.count >= minimumBytes else {
            throw ServiceEnvironmentError(variable: name, problem: "must be at least \(minimumBytes) bytes long (\(generate))")
        }
        var counts: [UInt8: Int] = [:]
        for byte in value.utf8 { counts[byte, default: 0] += 1 }
        guard counts.count >= 10, let most = counts.values.max(), most * 4 <= value.utf8.count else {
            throw ServiceEnvironmentError(variable: name, problem: "does not look random: too few different characters (\(generate))")
        }
        return value
    }

    /// What the example files' placeholders contain.
    static let placeholderMarks = ["replace-with", "replace-me", "change-me", "changeme"]

    // The typed reads below take the value as text and parse it here rather than through the reader's `int(forKey:)`
    // and `bool(forKey:)`, which answer nil (or the default) for a malformed value: a setting Konto cannot read is
    // refused with its name and the value's problem, never silently replaced by the default.

    public func integer(_ name: String, default defaultValue: Int, in range: ClosedRange<Int>) throws(ServiceEnvironmentError) -> Int {
        guard let text = string(name) else { return defaultValue }
        guard let value = Int(text), range.contains(value) else {
            throw ServiceEnvironmentError(variable: name, problem: "must be a whole number from \(range.lowerBound) to \(range.upperBound), got \"\(text)\"")
        }
        return value
    }

    public func port(_ name: String, default defaultValue: Int) throws(ServiceEnvironmentError) -> Int {
        try integer(name, default: defaultValue, in: 0...65535)
    }

    /// A duration in milliseconds.
    public func milliseconds(_ name: String, default defaultValue: Duration, in range: ClosedRange<Int> = 1...86_400_000) throws(ServiceEnvironmentError) -> Duration {
        guard string(name) != nil else { return defaultValue }
        return .milliseconds(try integer(name, default: 0, in: range))
    }

    /// `on`/`off` (also `true`/`false`, `1`/`0`).
    public func flag(_ name: String, default defaultValue: Bool) throws(ServiceEnvironmentError) -> Bool {
        guard let text = string(name) else { return defaultValue }
        switch text.lowercased() {
        case "on", "true", "1": return true
        case "off", "false", "0": return false
        default: throw ServiceEnvironmentError(variable: name, problem: "must be on or off, got \"\(text)\"")
        }
    }

    public func logLevel(_ name: String, default defaultValue: Logger.Level = .info) throws(ServiceEnvironmentError) -> Logger.Level {
        guard let text = string(name) else { return defaultValue }
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
            throw ServiceEnvironmentError(variable: name, problem: "must be one of \(names), got \"\(text)\"")
        }
        return level
    }
}

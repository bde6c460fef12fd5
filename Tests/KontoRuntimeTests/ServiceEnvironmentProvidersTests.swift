import Configuration
import Foundation
import KontoRuntime
import SystemPackage
import Logging
import Testing

/// Where a service's settings come from (``ServiceEnvironment/load(_:)``): the environment, then an environment file,
/// then a secrets directory, read through swift-configuration's providers.
@Suite("Service environment providers")
struct ServiceEnvironmentProvidersTests {
    /// A fresh directory for one test, removed after it.
    static func withFolder(_ body: (URL) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("konto-env-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(folder)
    }

    static let secret = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

    @Test("the environment file and the secrets directory add settings; the environment wins over the file, the file over the directory")
    func precedence() async throws {
        try await Self.withFolder { folder in
            let file = folder.appendingPathComponent("konto.env")
            try """
            # comments and blank lines are skipped

            KONTO_IDENTITY_PORT=7101
            KONTO_LOG_LEVEL=debug
            KONTO_IDENTITY_BUSY_MS=900
            """.write(to: file, atomically: true, encoding: .utf8)
            let secrets = folder.appendingPathComponent("secrets")
            try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true)
            try (Self.secret + "\n").write(to: secrets.appendingPathComponent("konto-wire-secret"), atomically: true, encoding: .utf8)
            try "7201".write(to: secrets.appendingPathComponent("konto-identity-port"), atomically: true, encoding: .utf8)

            let environment = try await ServiceEnvironment.load([
                "KONTO_ENV_FILE": file.path, "KONTO_SECRETS_DIRECTORY": secrets.path, "KONTO_LOG_LEVEL": "warning",
            ])
            #expect(try environment.logLevel("KONTO_LOG_LEVEL") == .warning)
            #expect(try environment.port("KONTO_IDENTITY_PORT", default: 1) == 7101)
            #expect(try environment.milliseconds("KONTO_IDENTITY_BUSY_MS", default: .seconds(1)) == .milliseconds(900))
            // The directory's file, its trailing newline trimmed.
            #expect(try environment.secret("KONTO_WIRE_SECRET") == Self.secret)
            #expect(environment.string("KONTO_PROFILE_PORT") == nil)
        }
    }

    @Test("a value from a file is refused like one from the environment, naming the setting")
    func refusedFromFile() async throws {
        try await Self.withFolder { folder in
            let file = folder.appendingPathComponent("konto.env")
            try "KONTO_IDENTITY_PORT=http\n".write(to: file, atomically: true, encoding: .utf8)
            let environment = try await ServiceEnvironment.load(["KONTO_ENV_FILE": file.path])
            let error = #expect(throws: ServiceEnvironmentError.self) { _ = try environment.port("KONTO_IDENTITY_PORT", default: 1) }
            #expect(error?.description == "KONTO_IDENTITY_PORT must be a whole number from 0 to 65535, got \"http\"")
        }
    }

    @Test("a missing environment file or secrets directory is refused, naming the variable", arguments: [
        ServiceEnvironment.envFileVariable, ServiceEnvironment.secretsDirectoryVariable,
    ])
    func missing(variable: String) async throws {
        try await Self.withFolder { folder in
            let path = folder.appendingPathComponent("absent").path
            do {
                _ = try await ServiceEnvironment.load([variable: path])
                Issue.record("a missing \(variable) was accepted")
            } catch let error as ServiceEnvironmentError {
                #expect(error.variable == variable)
                #expect(error.description.contains(path))
            }
        }
    }

    @Test("a Kubernetes Secret volume (each file a symbolic link into ..data) is read, which the provider alone does not")
    func kubernetesSecretVolume() async throws {
        try await Self.withFolder { folder in
            // The kubelet's layout: the values in a timestamped hidden directory, `..data` linking to it, and each name
            // a link through `..data`.
            let volume = folder.appendingPathComponent("secrets")
            let values = volume.appendingPathComponent("..2026_11_27_20_00_00.123456789")
            try FileManager.default.createDirectory(at: values, withIntermediateDirectories: true)
            try Self.secret.write(to: values.appendingPathComponent("konto-wire-secret"), atomically: true, encoding: .utf8)
            try "7301".write(to: values.appendingPathComponent("konto-profile-port"), atomically: true, encoding: .utf8)
            try FileManager.default.createSymbolicLink(atPath: volume.appendingPathComponent("..data").path, withDestinationPath: values.lastPathComponent)
            for name in ["konto-wire-secret", "konto-profile-port"] {
                try FileManager.default.createSymbolicLink(atPath: volume.appendingPathComponent(name).path, withDestinationPath: "..data/" + name)
            }

            let environment = try await ServiceEnvironment.load(["KONTO_SECRETS_DIRECTORY": volume.path])
            #expect(try environment.secret("KONTO_WIRE_SECRET") == Self.secret)
            #expect(try environment.port("KONTO_PROFILE_PORT", default: 1) == 7301)
            // The straightforward way, swift-configuration's provider on the volume itself, skips the links and finds
            // nothing: why ServiceEnvironment reads the directory behind ..data.
            let plain = ServiceEnvironment(reader: ConfigReader(provider: try await DirectoryFilesProvider(directoryPath: FilePath(volume.path))))
            #expect(plain.string("KONTO_WIRE_SECRET") == nil)
        }
    }

    @Test("without either variable only the environment counts")
    func environmentOnly() async throws {
        let environment = try await ServiceEnvironment.load(["KONTO_GATEWAY_PORT": "8123"])
        #expect(try environment.port("KONTO_GATEWAY_PORT", default: 1) == 8123)
        #expect(environment.string("KONTO_WIRE_SECRET") == nil)
    }
}

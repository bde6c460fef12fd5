import ArgumentParser
import Foundation
import IdentityService
import KontoContracts
import KontoModel
import KontoPostgres
import Logging
import NIOPosix
import PostgresNIO

/// `konto admin`: what an operator does (docs/ADMIN.md). The first key is made here against Identity's database; the
/// rest goes through the gateway's admin API with a key.
struct Admin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Operate a deployment: operator keys.",
        subcommands: [AdminKeys.self]
    )
}

/// `konto admin keys`: operator keys.
struct AdminKeys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Make operator keys.",
        subcommands: [Generate.self, Create.self]
    )

    /// `konto admin keys generate`: a fresh key's text, for `KONTO_IDENTITY_BOOTSTRAP_OPERATOR_KEY`. Nothing is stored.
    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a fresh operator key for KONTO_IDENTITY_BOOTSTRAP_OPERATOR_KEY (nothing is stored)."
        )

        func run() {
            print(OperatorKeyText.generate().text)
        }
    }

    /// `konto admin keys create`: a key stored straight into Identity's database (its schema migrated first, as Identity
    /// would at its start), printed once.
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Store a new operator key in Identity's database and print it once.",
            discussion: "The database URL comes from --database-url or KONTO_IDENTITY_DATABASE_URL. Scopes: \(OperatorScope.allCases.map(\.rawValue).joined(separator: ", ")); --all-scopes for every one."
        )

        @Option(name: .customLong("database-url"), help: ArgumentHelp("Identity's PostgreSQL URL (default $KONTO_IDENTITY_DATABASE_URL).", valueName: "url"))
        var databaseURL: String?
        @Option(help: "What the key is for (1 to 100 characters).") var name: String
        @Option(name: .customLong("scope"), help: ArgumentHelp("A scope the key holds (repeat for more).", valueName: "scope")) var scopes: [String] = []
        @Flag(help: "Every scope.") var allScopes = false
        @Option(help: ArgumentHelp("Days until the key expires (default: never).", valueName: "days")) var expiresInDays: Int?

        func validate() throws {
            guard let url = databaseURL ?? ProcessInfo.processInfo.environment["KONTO_IDENTITY_DATABASE_URL"], !url.isEmpty else {
                throw ValidationError("--database-url or KONTO_IDENTITY_DATABASE_URL names Identity's database")
            }
            _ = try Self.settings(url)
            let unknown = scopes.filter { OperatorScope(rawValue: $0) == nil }
            guard unknown.isEmpty else {
                throw ValidationError("unknown scope \(unknown.joined(separator: ", ")): one of \(OperatorScope.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            guard allScopes || !scopes.isEmpty else { throw ValidationError("at least one --scope, or --all-scopes") }
            guard (1...IdentityCreateOperatorKeyRequest.maximumNameLength).contains(name.trimmingCharacters(in: .whitespaces).count) else {
                throw ValidationError("--name has 1 to \(IdentityCreateOperatorKeyRequest.maximumNameLength) characters")
            }
            if let expiresInDays, !(1...3_650).contains(expiresInDays) { throw ValidationError("--expires-in-days is 1 to 3650") }
        }

        static func settings(_ url: String) throws -> PostgresSettings {
            do {
                return try PostgresSettings(url: url)
            } catch {
                throw ValidationError("the database URL is not usable: \(error.message)")
            }
        }

        func run() async throws {
            let url = databaseURL ?? ProcessInfo.processInfo.environment["KONTO_IDENTITY_DATABASE_URL"] ?? ""
            let settings = try Self.settings(url)
            var logger = Logger(label: "konto.admin")
            logger.logLevel = .error
            let client = PostgresClient(configuration: try settings.clientConfiguration(), eventLoopGroup: MultiThreadedEventLoopGroup.singleton, backgroundLogger: logger)
            let storage = PostgresIdentityStorage(client: client, logger: logger)
            let wanted = allScopes ? OperatorScope.allCases : scopes.compactMap(OperatorScope.init(rawValue:))
            let expiresAt = expiresInDays.map { Timestamp.now.adding(seconds: Int64($0) * 86_400) }
            let created: IdentityOperatorKeyCreated
            do {
                created = try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { await client.run() }
                    defer { group.cancelAll() }
                    try await storage.migrate(logger: logger)
                    return try await OperatorKeyMaker.create(name: name, scopes: wanted, expiresAt: expiresAt, in: storage)
                }
            } catch let error as ServiceError {
                Output.write("konto: the key was not stored: \(error.message)\n", to: .standardError)
                throw ExitCode(CommandFailure.Status.refused.rawValue)
            } catch {
                // Never the URL (it may hold the password): the kind of failure only.
                Output.write("konto: Identity's database cannot be used (\(String(reflecting: type(of: error))))\n", to: .standardError)
                throw ExitCode(CommandFailure.Status.unreachable.rawValue)
            }
            print("""
                # Operator key \(created.key.id) ("\(created.key.name)"; \(created.key.scopes.map(\.rawValue).joined(separator: " "))\(created.key.expiresAt.map { "; expires \($0)" } ?? "")).
                # Shown once: keep it as a secret. Identity stores only its hash.
                \(created.secret.value)
                """)
        }
    }
}

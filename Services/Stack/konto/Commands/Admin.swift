import ArgumentParser
import Foundation
import IdentityService
import KontoClient
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
        abstract: "Operate a deployment: operator keys, accounts (docs/ADMIN.md).",
        discussion: "Commands other than `keys generate` and `keys create` call the gateway's admin listener (--admin, $KONTO_ADMIN_URL) with the operator key in $KONTO_ADMIN_KEY (else asked for, or standard input's first line).",
        subcommands: [AdminKeys.self, AdminAccounts.self, AdminAudit.self, AdminDeliveries.self, AdminWebhooks.self, AdminClients.self]
    )
}

/// `konto admin keys`: operator keys.
struct AdminKeys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Operator keys: make the first against the database, then list, make and revoke through the admin API.",
        subcommands: [Generate.self, Create.self, List.self, New.self, Revoke.self]
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

    /// `konto admin keys list`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the operator keys (scope keys:write).")
        @OptionGroup var options: AdminOptions

        struct Listed: Encodable {
            var id: String, name: String, scopes: [String], createdAt: Date, createdBy: String?, expiresAt: Date?, lastUsedAt: Date?, revokedAt: Date?
        }

        func run() async throws {
            try await options.perform { admin, output in
                let keys = try await admin.keys()
                let lines = keys.map { key in
                    var line = "\(key.id)  \(key.name)  \(key.scopes.joined(separator: " "))"
                    if let revoked = key.revokedAt { line += "  revoked \(revoked.formatted(.iso8601))" }
                    if let expires = key.expiresAt { line += "  expires \(expires.formatted(.iso8601))" }
                    return line
                }
                output.answer(lines.joined(separator: "\n"), keys.map {
                    Listed(id: $0.id, name: $0.name, scopes: $0.scopes, createdAt: $0.createdAt, createdBy: $0.createdBy, expiresAt: $0.expiresAt, lastUsedAt: $0.lastUsedAt, revokedAt: $0.revokedAt)
                })
            }
        }
    }

    /// `konto admin keys new NAME --scope …`: a key made through the admin API by the caller's key.
    struct New: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make an operator key with scopes among your key's (scope keys:write); printed once.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "What the key is for.") var name: String
        @Option(name: .customLong("scope"), help: ArgumentHelp("A scope the key holds (repeat for more).", valueName: "scope")) var scopes: [String] = []
        @Option(help: ArgumentHelp("Days until the key expires (default: never).", valueName: "days")) var expiresInDays: Int?

        struct Made: Encodable { var id: String, name: String, scopes: [String], secret: String }

        func validate() throws {
            guard !scopes.isEmpty else { throw ValidationError("at least one --scope") }
            let unknown = scopes.filter { OperatorScope(rawValue: $0) == nil }
            guard unknown.isEmpty else { throw ValidationError("unknown scope \(unknown.joined(separator: ", "))") }
            if let expiresInDays, !(1...3_650).contains(expiresInDays) { throw ValidationError("--expires-in-days is 1 to 3650") }
        }

        func run() async throws {
            try await options.perform { admin, output in
                let made = try await admin.createKey(name: name, scopes: scopes, expiresAt: expiresInDays.map { Date().addingTimeInterval(Double($0) * 86_400) })
                output.answer(
                    "# Operator key \(made.key.id) (\"\(made.key.name)\"; \(made.key.scopes.joined(separator: " "))). Shown once.\n\(made.secret)",
                    Made(id: made.key.id, name: made.key.name, scopes: made.key.scopes, secret: made.secret)
                )
            }
        }
    }

    /// `konto admin keys revoke ID`.
    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke an operator key (scope keys:write).")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The key's id.") var keyId: String

        struct Revoked: Encodable { var revoked: String }

        func run() async throws {
            try await options.perform { admin, output in
                try await admin.revokeKey(keyId)
                output.answer("Key \(keyId) revoked.", Revoked(revoked: keyId))
            }
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

/// `konto admin accounts`: finding and reading accounts through the admin API.
struct AdminAccounts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accounts",
        abstract: "Search accounts and show one (scope accounts:read); disable and enable one (scope accounts:write).",
        subcommands: [
            Search.self, Show.self, Create.self, Import.self, Update.self, Disable.self, Enable.self, Delete.self, PasswordReset.self, RemoveFactor.self, Unlink.self,
            Sessions.self, EndSessions.self,
        ]
    )

    /// `konto admin accounts search`.
    struct Search: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Accounts matching every filter given, newest first.")
        @OptionGroup var options: AdminOptions
        @Option(help: "The userId contains this (case-insensitive).") var contains: String?
        @Option(help: "The userId begins with this (case-insensitive).") var prefix: String?
        @Option(help: ArgumentHelp("Address confirmed or not.", valueName: "true|false")) var verified: Bool?
        @Option(help: ArgumentHelp("Disabled or not.", valueName: "true|false")) var disabled: Bool?
        @Option(help: ArgumentHelp("Anonymous or not.", valueName: "true|false")) var anonymous: Bool?
        @Option(help: ArgumentHelp("Has a second factor or not.", valueName: "true|false")) var secondFactor: Bool?
        @Option(help: "Has an identity from this provider.") var provider: String?
        @Option(help: "Where the previous page ended (its next cursor).") var cursor: String?
        @Option(help: "At most this many (1 to 200, default 50).") var limit: Int?

        struct Page: Encodable { var accounts: [KontoAccountSummary]; var nextCursor: String?; var totalEstimate: Int; var totalIsExact: Bool }

        func validate() throws {
            if let limit, !(1...200).contains(limit) { throw ValidationError("--limit is 1 to 200") }
        }

        func run() async throws {
            try await options.perform { admin, output in
                let page = try await admin.searchAccounts(KontoAccountQuery(
                    userIdPrefix: prefix, userIdContains: contains, verified: verified, disabled: disabled, anonymous: anonymous, hasSecondFactor: secondFactor,
                    provider: provider, cursor: cursor, limit: limit
                ))
                var lines = page.accounts.map { "\($0.accountId)  \($0.userId ?? "(anonymous)")  \($0.verified ? "verified" : "unverified")\($0.disabled ? "  disabled" : "")  \($0.createdAt.formatted(.iso8601))" }
                lines.append("\(page.totalIsExact ? "" : "about ")\(page.totalEstimate) matching" + (page.nextCursor.map { "; next page: --cursor \($0)" } ?? ""))
                output.answer(lines.joined(separator: "\n"), Page(accounts: page.accounts, nextCursor: page.nextCursor, totalEstimate: page.totalEstimate, totalIsExact: page.totalIsExact))
            }
        }
    }

    /// `konto admin accounts show ID`.
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "An account: its details and credential metadata (never a secret).")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The accountId.") var accountId: String

        struct Shown: Encodable {
            var account: AssembledAccount, createdAt: Date, hasPassword: Bool, disabledAt: Date?, lastSignInAt: Date?, verifiedAt: Date?
            var factors: [KontoAdminAccount.Factor], identities: [KontoAdminAccount.LinkedIdentity], sessionCount: Int
        }

        func run() async throws {
            try await options.perform { admin, output in
                let found = try await admin.account(accountId)
                var lines = [
                    "account     \(found.account.accountId)",
                    "userId      \(found.account.details[UserIdKey.self] ?? "(anonymous)")",
                    "created     \(found.createdAt.formatted(.iso8601))",
                    "password    \(found.hasPassword ? "yes" : "no")",
                    "disabled    \(found.disabledAt.map { $0.formatted(.iso8601) } ?? "no")",
                    "verified    \(found.verifiedAt.map { $0.formatted(.iso8601) } ?? "no")",
                    "last sign-in \(found.lastSignInAt.map { $0.formatted(.iso8601) } ?? "never")",
                    "sessions    \(found.sessionCount)",
                ]
                lines += found.factors.map { "factor      \($0.kind) \($0.name ?? "") (\($0.id))" }
                lines += found.identities.map { "identity    \($0.provider) (\($0.id))" }
                output.answer(lines.joined(separator: "\n"), Shown(
                    account: found.account, createdAt: found.createdAt, hasPassword: found.hasPassword, disabledAt: found.disabledAt, lastSignInAt: found.lastSignInAt, verifiedAt: found.verifiedAt,
                    factors: found.factors, identities: found.identities, sessionCount: found.sessionCount
                ))
            }
        }
    }

    /// Account details given as a JSON object on the command line.
    static func details(_ json: String, option: String) throws -> AccountDetails {
        do {
            return try JSONDecoder().decode(AccountDetails.self, from: Data(json.utf8))
        } catch {
            throw ValidationError("\(option) must be a JSON object of account details")
        }
    }

    /// `konto admin accounts create USERID`: the password, if any, from standard input (never an argument, which
    /// other users see in the process list).
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make an account: no session, no mail (scope accounts:write). A password from standard input, an imported hash, or neither."
        )
        @OptionGroup var options: AdminOptions
        @Argument(help: "The userId.") var userId: String
        @Flag(help: "Read the password from standard input (its first line).") var passwordStdin = false
        @Option(help: "A password hash from another system (argon2id, bcrypt, PBKDF2-SHA256 PHC string).") var passwordHash: String?
        @Option(help: ArgumentHelp("The details as a JSON object, e.g. '{\"name\":{\"givenName\":\"Ada\"}}'.", valueName: "json")) var details: String?
        @Flag(help: "The userId's address counts as verified.") var verified = false

        func validate() throws {
            if passwordStdin, passwordHash != nil { throw ValidationError("--password-stdin and --password-hash exclude each other") }
        }

        func run() async throws {
            let parsed = try details.map { try AdminAccounts.details($0, option: "--details") }
            try await options.perform { [parsed] admin, output in
                // After the key (standard input's first line when KONTO_ADMIN_KEY is not set).
                let password = passwordStdin ? try Terminal.readSecret(prompt: "Password for the account: ") : nil
                let made = try await admin.createAccount(KontoNewAccount(
                    userId: userId, password: password, passwordHash: passwordHash, details: parsed, verified: verified ? true : nil
                ))
                output.answer("Account \(made.account.accountId) made for \(userId).", Show.Shown(
                    account: made.account, createdAt: made.createdAt, hasPassword: made.hasPassword, disabledAt: made.disabledAt, lastSignInAt: made.lastSignInAt,
                    verifiedAt: made.verifiedAt, factors: made.factors, identities: made.identities, sessionCount: made.sessionCount
                ))
            }
        }
    }

    /// `konto admin accounts update ID`.
    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change an account: details (server-owned keys too), its userId (its sessions end), its address verified (scope accounts:write)."
        )
        @OptionGroup var options: AdminOptions
        @Argument(help: "The accountId.") var accountId: String
        @Option(help: "A new userId.") var userId: String?
        @Flag(help: "The userId's address counts as verified.") var verified = false
        @Option(help: ArgumentHelp("Details to set, as a JSON object.", valueName: "json")) var set: String?
        @Option(help: "A detail to remove (repeatable).") var remove: [String] = []
        @Option(help: "The details' version the change expects (as an ETag's number).") var expectVersion: Int64?

        func run() async throws {
            let details = try set.map { try AdminAccounts.details($0, option: "--set") }
            try await options.perform { [details] admin, output in
                let changed = try await admin.updateAccount(accountId, KontoAccountChanges(
                    userId: userId, verified: verified ? true : nil, set: details, remove: remove.isEmpty ? nil : remove, expectedVersion: expectVersion
                ))
                output.answer("Account \(accountId) changed.", Show.Shown(
                    account: changed.account, createdAt: changed.createdAt, hasPassword: changed.hasPassword, disabledAt: changed.disabledAt,
                    lastSignInAt: changed.lastSignInAt, verifiedAt: changed.verifiedAt, factors: changed.factors, identities: changed.identities,
                    sessionCount: changed.sessionCount
                ))
            }
        }
    }

    /// `konto admin accounts import FILE`: exits 1 when any line was refused.
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make accounts from NDJSON, one account per line as `create` takes it; each line is reported (exit 1 when any was refused)."
        )
        @OptionGroup var options: AdminOptions
        @Argument(help: "The NDJSON file, or - for standard input.") var file: String

        func run() async throws {
            var file: Data?
            if self.file != "-" {
                guard let read = FileManager.default.contents(atPath: self.file) else { throw ValidationError("cannot read \(self.file)") }
                file = read
            }
            var failed = 0
            try await options.perform { [file] admin, output in
                // Standard input after the key (its first line when KONTO_ADMIN_KEY is not set), through the same buffer.
                var data = file ?? Data()
                if file == nil {
                    while let line = readLine(strippingNewline: false) { data.append(contentsOf: line.utf8) }
                }
                let report = try await admin.importAccounts(ndjson: data)
                failed = report.failed
                var lines = report.lines.map { line in
                    line.accountId.map { "line \(line.line): made \($0)" } ?? "line \(line.line): refused, \(line.code ?? "?") \(line.detail ?? "")"
                }
                lines.append("\(report.created) made, \(report.failed) refused")
                output.answer(lines.joined(separator: "\n"), report)
            }
            if failed > 0 { throw ExitCode(1) }
        }
    }

    /// `konto admin accounts disable ID`.
    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable an account: its sessions end, no sign-in succeeds until it is enabled.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The accountId.") var accountId: String

        struct Changed: Encodable { var accountId: String; var disabled: Bool }

        func run() async throws {
            try await options.perform { admin, output in
                try await admin.disableAccount(accountId)
                output.answer("Account \(accountId) disabled.", Changed(accountId: accountId, disabled: true))
            }
        }
    }

    /// `konto admin accounts enable ID`.
    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled account again.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The accountId.") var accountId: String

        func run() async throws {
            try await options.perform { admin, output in
                try await admin.enableAccount(accountId)
                output.answer("Account \(accountId) enabled.", Disable.Changed(accountId: accountId, disabled: false))
            }
        }
    }

    /// `konto admin accounts delete ID --yes`: no way back, so it is asked for by name.
    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an account by its owner's deletion path: its data is erased (scope accounts:write).")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The accountId.") var accountId: String
        @Flag(help: "Yes, delete it: there is no way back.") var yes = false

        struct Deleted: Encodable { var accountId: String; var deleted: Bool }

        func validate() throws {
            guard yes else { throw ValidationError("deleting an account cannot be undone: add --yes") }
        }

        func run() async throws {
            try await options.perform { admin, output in
                try await admin.deleteAccount(accountId)
                output.answer("Account \(accountId) deleted.", Deleted(accountId: accountId, deleted: true))
            }
        }
    }

    /// `konto admin accounts password-reset ID`.
    struct PasswordReset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "password-reset", abstract: "Mail the owner a password reset link (scope accounts:write).")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The accountId.") var accountId: String

        struct Sent: Encodable { var accountId: String; var resetMailed: Bool }

        func run() async throws {
            try await options.perform { admin, output in
                try await admin.sendPasswordReset(accountId)
                output.answer("A password reset is on its way to the owner of \(accountId).", Sent(accountId: accountId, resetMailed: true))
            }
        }
    }

    /// `konto admin accounts remove-factor ID FACTOR`.
    struct RemoveFactor: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-factor", abstract: "Remove one of an account's second factors (its id from `show`); the owner is mailed (scope factors:write)."
        )
        @OptionGroup var options: AdminOptions
        @Argument(help: "The accountId.") var accountId: String
        @Argument(help: "The factor's id.") var factorId: String

        struct Removed: Encodable { var accountId: String; var factorId: String }

        func run() async throws {
            try await options.perform { admin, output in
                try await admin.removeFactor(factorId, of: accountId)
                output.answer("Factor \(factorId) of \(accountId) removed; its owner is told.", Removed(accountId: accountId, factorId: factorId))
            }
        }
    }

    /// `konto admin accounts unlink ID IDENTITY`.
    struct Unlink: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Unlink one of an account's provider identities (its id from `show`), never its last way in (scope factors:write)."
        )
        @OptionGroup var options: AdminOptions
        @Argument(help: "The accountId.") var accountId: String
        @Argument(help: "The identity's id.") var identityId: String

        struct Unlinked: Encodable { var accountId: String; var identityId: String }

        func run() async throws {
            try await options.perform { admin, output in
                try await admin.unlinkIdentity(identityId, of: accountId)
                output.answer("Identity \(identityId) unlinked from \(accountId).", Unlinked(accountId: accountId, identityId: identityId))
            }
        }
    }

    /// `konto admin accounts sessions ID`.
    struct Sessions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "An account's live sessions (scope accounts:read).")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The accountId.") var accountId: String

        func run() async throws {
            try await options.perform { admin, output in
                let sessions = try await admin.sessions(of: accountId)
                let lines = sessions.map { "\($0.id)  since \($0.createdAt.formatted(.iso8601))  level \($0.assuranceLevel)  until \($0.absoluteExpiresAt.formatted(.iso8601))" }
                output.answer(lines.isEmpty ? "No sessions." : lines.joined(separator: "\n"), sessions)
            }
        }
    }

    /// `konto admin accounts end-sessions ID [--session S]`.
    struct EndSessions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "end-sessions", abstract: "End an account's sessions, or one (scope sessions:write).")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The accountId.") var accountId: String
        @Option(help: "End this session only.") var session: String?

        struct Ended: Encodable { var accountId: String; var sessionsEnded: Int }

        func run() async throws {
            try await options.perform { admin, output in
                let ended: Int
                if let session {
                    try await admin.endSession(session, of: accountId)
                    ended = 1
                } else {
                    ended = try await admin.endSessions(of: accountId)
                }
                output.answer("\(ended) session\(ended == 1 ? "" : "s") of \(accountId) ended.", Ended(accountId: accountId, sessionsEnded: ended))
            }
        }
    }
}

import ArgumentParser
import Foundation
import KontoClient

/// `konto admin clients`: the OpenID Provider's clients, listed, registered, changed, given a new secret and removed
/// at run time (docs/OIDC.md, "Clients through the admin API").
struct AdminClients: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clients",
        abstract: "The OpenID Provider's clients: list them, register one, change, give a new secret to or remove one registered here (scope clients:write).",
        subcommands: [List.self, Add.self, Update.self, Rotate.self, Remove.self],
        defaultSubcommand: List.self
    )

    /// The line a client's secret is printed on: once, never again.
    static func secretLine(_ secret: String) -> String {
        "Client secret (shown this once, not again: Konto keeps only its hash): \(secret)"
    }

    /// A client as `list` prints it, on one line.
    static func line(_ client: KontoOpenIDClient) -> String {
        let kind = client.type + (client.authentication.map { "/\($0)" } ?? "")
        return "\(client.id)  \(client.source)  \(kind)  \(client.name)\(client.firstParty ? " (first party)" : "")  "
            + "\(client.redirectURIs.joined(separator: ","))  \(client.scopes.joined(separator: " "))"
    }

    /// A client's settings as `add` and `update` take them: `update` replaces them all, as registering sets them.
    struct Settings: ParsableArguments {
        @Option(help: "What the consent page calls it.") var name: String
        @Option(help: "public (a browser or mobile app, with PKCE) or confidential (its servers prove who they are).") var type: String
        @Option(help: "A confidential client's: client_secret_basic (the default), client_secret_post or private_key_jwt (the default with --jwks).")
        var authentication: String?
        @Option(name: .customLong("redirect-uri"), help: "Where codes may be sent (repeatable, at least one).") var redirectURIs: [String] = []
        @Option(name: .customLong("post-logout-redirect-uri"), help: "Where a sign-out may return (repeatable).") var postLogoutRedirectURIs: [String] = []
        @Option(name: .customLong("scope"), help: "A scope it may ask for (repeatable): openid, profile, email, offline_access; openid without.")
        var scopes: [String] = []
        @Flag(help: "The deployment's own application: no consent page.") var firstParty = false
        @Option(help: "ES256 (the default) or RS256.") var idTokenAlgorithm: String?
        @Option(name: .customLong("sector"), help: "Pairwise subject identifiers for this sector (a host name).") var sectorIdentifier: String?
        @Option(help: ArgumentHelp("A JWK Set file of the client's public keys, for private_key_jwt.", valueName: "file")) var jwks: String?

        func validate() throws {
            guard !redirectURIs.isEmpty else { throw ValidationError("--redirect-uri: at least one") }
        }

        /// The --jwks file's bytes, read before any call so an unreadable file is a usage error.
        func keySet() throws -> Data? {
            guard let jwks else { return nil }
            guard let read = FileManager.default.contents(atPath: jwks) else { throw ValidationError("cannot read \(jwks)") }
            return read
        }

        func settings(keySet: Data?) throws -> KontoOpenIDClientSettings {
            let keys = try keySet.map(KontoOpenIDClientKey.keys(jwkSet:))
            var method = authentication
            if method == nil, type == "confidential" { method = keys == nil ? "client_secret_basic" : "private_key_jwt" }
            return KontoOpenIDClientSettings(
                name: name, type: type, authentication: method, keys: keys, redirectURIs: redirectURIs, postLogoutRedirectURIs: postLogoutRedirectURIs,
                scopes: scopes.isEmpty ? ["openid"] : scopes, firstParty: firstParty, idTokenAlgorithm: idTokenAlgorithm, sectorIdentifier: sectorIdentifier
            )
        }
    }

    /// `konto admin clients list`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The clients: the deployment's clients file's, then those registered through the API.")
        @OptionGroup var options: AdminOptions

        func run() async throws {
            try await options.perform { admin, output in
                let clients = try await admin.openIDClients()
                var lines = clients.map(AdminClients.line)
                lines.append("\(clients.count) clients")
                output.answer(lines.joined(separator: "\n"), clients)
            }
        }
    }

    /// `konto admin clients add ID --name … --type … --redirect-uri … […]`.
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register a client: every replica serves it at once.",
            discussion: "A confidential client with a secret gets one made and printed this once; keep it for the application's servers."
        )
        @OptionGroup var options: AdminOptions
        @Argument(help: "The client's id, as its application sends it (letters, digits, . _ - :).") var id: String
        @OptionGroup var client: Settings

        func run() async throws {
            let keySet = try client.keySet()
            try await options.perform { admin, output in
                let saved = try await admin.createOpenIDClient(id: id, try client.settings(keySet: keySet))
                var text = "Registered \(saved.client.id) (\(saved.client.type)\(saved.client.authentication.map { ", \($0)" } ?? ""))."
                if let secret = saved.secret { text += "\n" + AdminClients.secretLine(secret) }
                output.answer(text, saved)
            }
        }
    }

    /// `konto admin clients update ID --name … --type … --redirect-uri … […]`.
    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a client registered here: every replica serves the new settings at once.",
            discussion: """
                Every setting is replaced by the options given, as add sets them (one left out takes add's default). Its type and kind of \
                authentication stay: a secret client may move between client_secret_basic and client_secret_post and keeps its secret; a \
                private_key_jwt client gives its keys again with --jwks.
                """
        )
        @OptionGroup var options: AdminOptions
        @Argument(help: "The client's id.") var id: String
        @OptionGroup var client: Settings

        func run() async throws {
            let keySet = try client.keySet()
            try await options.perform { admin, output in
                let updated = try await admin.updateOpenIDClient(id: id, try client.settings(keySet: keySet))
                output.answer(AdminClients.line(updated), updated)
            }
        }
    }

    /// `konto admin clients rotate ID [--keep-previous SECONDS]`.
    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give a client registered here a new secret, printed this once.",
            discussion: "The previous secret is refused at once, or still accepted for --keep-previous seconds (at most 604800, seven days) while the application's servers change over."
        )
        @OptionGroup var options: AdminOptions
        @Argument(help: "The client's id.") var id: String
        @Option(name: .customLong("keep-previous"), help: ArgumentHelp("How long the previous secret is still accepted.", valueName: "seconds"))
        var keepPreviousSeconds: Int?

        func run() async throws {
            try await options.perform { admin, output in
                let saved = try await admin.rotateOpenIDClientSecret(id: id, keepPreviousSeconds: keepPreviousSeconds)
                var text = "Gave \(id) a new secret; the previous one is "
                    + (saved.client.previousSecretExpiresAt.map { "still accepted until \($0.formatted(.iso8601))." } ?? "refused from now on.")
                if let secret = saved.secret { text += "\n" + AdminClients.secretLine(secret) }
                output.answer(text, saved)
            }
        }
    }

    /// `konto admin clients remove ID`.
    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a client registered through the API, with every account's grants and consents for it.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The client's id.") var id: String

        func run() async throws {
            try await options.perform { admin, output in
                let removed = try await admin.removeOpenIDClient(id: id)
                output.answer("Removed \(id) (\(removed.grantsEnded) grants ended, \(removed.consentsRemoved) consents removed).", removed)
            }
        }
    }
}

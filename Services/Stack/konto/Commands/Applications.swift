import ArgumentParser
import Foundation
import KontoClient

/// `konto applications`: the applications signing in with Konto as an OpenID Provider that have access to the account;
/// `konto applications revoke CLIENT` takes one's access away.
struct Applications: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Applications with access through Konto as an OpenID Provider: list, revoke.",
        subcommands: [List.self, Revoke.self],
        defaultSubcommand: List.self
    )

    struct Listed: Encodable {
        var clientId: String
        var name: String
        var scopes: [String]
        var consentedAt: Date?
        var grants: Int
        var lastUsedAt: Date?
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the applications with access to the account.")
        @OptionGroup var options: GatewayOptions

        func run() async throws {
            try await options.perform { client, output in
                _ = try await client.requireStoredSession()
                let applications = try await client.applications()
                let lines = applications.map { "\($0.clientId)  \($0.name)  \($0.scopes.joined(separator: " "))  \($0.grants) sign-in\($0.grants == 1 ? "" : "s") holding tokens" }
                output.answer(
                    lines.isEmpty ? "No application has access." : lines.joined(separator: "\n"),
                    applications.map { Listed(clientId: $0.clientId, name: $0.name, scopes: $0.scopes, consentedAt: $0.consentedAt, grants: $0.grants, lastUsedAt: $0.lastUsedAt) }
                )
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke",
            abstract: "Take an application's access away: its consent and every token it holds end; it asks again at its next sign-in."
        )
        @OptionGroup var options: GatewayOptions
        @Argument(help: "The application's client id (konto applications).") var clientId: String

        struct Answer: Encodable { var revoked: String }

        func run() async throws {
            try await options.perform { client, output in
                _ = try await client.requireStoredSession()
                try await client.revokeApplication(clientId: clientId)
                output.answer("\(clientId) has no access any more.", Answer(revoked: clientId))
            }
        }
    }
}

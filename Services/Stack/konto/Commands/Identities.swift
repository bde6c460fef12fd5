import ArgumentParser
import Foundation
import KontoClient

/// `konto identities`: the external identities linked to the account; `konto identities providers` lists what the
/// deployment offers, `link` links one by its ID token, `unlink ID` removes one.
struct Identities: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "External identities (Sign in with Apple, OpenID Connect): list, the providers offered, link, unlink.",
        subcommands: [List.self, Providers.self, Link.self, Unlink.self],
        defaultSubcommand: List.self
    )

    struct Listed: Encodable {
        var id: String
        var provider: String
        var email: String?
        var emailVerified: Bool
        var createdAt: Date
        var lastUsedAt: Date?
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the account's linked identities.")
        @OptionGroup var options: GatewayOptions

        func run() async throws {
            try await options.perform { client, output in
                _ = try await client.requireStoredSession()
                let identities = try await client.identities()
                let lines = identities.map { "\($0.id)  \($0.provider)  \($0.email ?? "(no address)")\($0.emailVerified ? "" : " (unverified)")" }
                output.answer(
                    lines.isEmpty ? "No linked identity." : lines.joined(separator: "\n"),
                    identities.map { Listed(id: $0.id, provider: $0.provider, email: $0.email, emailVerified: $0.emailVerified, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt) }
                )
            }
        }
    }

    struct Providers: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "providers", abstract: "List the identity providers the deployment offers.")
        @OptionGroup var options: GatewayOptions

        struct Answer: Encodable { var name: String; var displayName: String }

        func run() async throws {
            try await options.perform { client, output in
                let providers = try await client.identityProviders()
                output.answer(
                    providers.isEmpty ? "No identity provider is configured." : providers.map { "\($0.name)  \($0.displayName)" }.joined(separator: "\n"),
                    providers.map { Answer(name: $0.name, displayName: $0.displayName) }
                )
            }
        }
    }

    struct Link: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "link",
            abstract: "Link a provider's identity, given its ID token (read from standard input's first line).",
            discussion: "Security-related: within the privileged window, or give --current-password to be asked for the password first."
        )
        @OptionGroup var options: GatewayOptions
        @Argument(help: "The provider's name (konto identities providers).") var provider: String
        @Option(parsing: .unconditional, help: "The nonce the ID token was minted for.") var nonce: String
        @Flag(help: "Ask for the current password (else the session must be within its privileged window).") var currentPassword = false

        func run() async throws {
            try await options.perform { client, output in
                _ = try await client.requireStoredSession()
                let current = currentPassword ? try Terminal.readSecret(prompt: "Current password: ") : nil
                let token = try Terminal.readSecret(prompt: "ID token: ")
                let linked = try await client.linkIdentity(provider: provider, idToken: token, nonce: nonce, currentPassword: current)
                output.answer(
                    "Linked \(linked.provider) (\(linked.email ?? "no address")) as \(linked.id): it signs in to this account from now on.",
                    Listed(id: linked.id, provider: linked.provider, email: linked.email, emailVerified: linked.emailVerified, createdAt: linked.createdAt, lastUsedAt: linked.lastUsedAt)
                )
            }
        }
    }

    struct Unlink: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unlink",
            abstract: "Unlink an identity (security-related; never the account's only way to sign in)."
        )
        @OptionGroup var options: GatewayOptions
        @Argument(help: "The identity's id (konto identities).") var identityId: String
        @Flag(help: "Ask for the current password (else the session must be within its privileged window).") var currentPassword = false

        struct Answer: Encodable { var unlinked: String }

        func run() async throws {
            try await options.perform { client, output in
                _ = try await client.requireStoredSession()
                let current = currentPassword ? try Terminal.readSecret(prompt: "Current password: ") : nil
                try await client.unlinkIdentity(id: identityId, currentPassword: current)
                output.answer("Unlinked \(identityId).", Answer(unlinked: identityId))
            }
        }
    }
}

import ArgumentParser
import Foundation
import KontoClient

/// `konto admin webhooks`: the webhook endpoints, listed, added and removed at run time.
struct AdminWebhooks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks",
        abstract: "The webhook endpoints: list them, add one, remove one added here (scope deliveries:write).",
        subcommands: [List.self, Add.self, Remove.self]
    )

    /// `konto admin webhooks list`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The endpoints: the deployment file's, then those added through the API.")
        @OptionGroup var options: AdminOptions

        func run() async throws {
            try await options.perform { admin, output in
                let endpoints = try await admin.webhooks()
                var lines = endpoints.map {
                    "\($0.name)  \($0.source)  \($0.url)  \($0.types?.joined(separator: ",") ?? "every type")\($0.deliversResetTokens ? "  (reset tokens)" : "")"
                }
                lines.append("\(endpoints.count) endpoints")
                output.answer(lines.joined(separator: "\n"), endpoints)
            }
        }
    }

    /// `konto admin webhooks add NAME URL [--type T …] [--secret-stdin]`.
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an endpoint: every event stored from now on, of its types, is POSTed to it signed (Standard Webhooks).",
            discussion: "Without --secret-stdin a signing secret is made and printed this once; keep it for the receiver."
        )
        @OptionGroup var options: AdminOptions
        @Argument(help: "Letters, digits, - and _ (1 to 64).") var name: String
        @Argument(help: "An https URL on a public host.") var url: String
        @Option(name: .customLong("type"), help: "An event type it receives (repeatable); every type without.") var types: [String] = []
        @Flag(help: "Read the signing secret (whsec_…) from standard input's next line instead of having one made.") var secretStdin = false

        func run() async throws {
            try await options.perform { admin, output in
                var secret: String?
                if secretStdin {
                    guard let line = readLine(strippingNewline: true), !line.isEmpty else { throw ValidationError("--secret-stdin: no secret on standard input") }
                    secret = line
                }
                let added = try await admin.addWebhook(name: name, url: url, types: types.isEmpty ? nil : types, secret: secret)
                var text = "Added \(added.webhook.name) → \(added.webhook.url)."
                if let made = added.secret {
                    text += "\nSigning secret (shown this once): \(made)"
                }
                output.answer(text, added)
            }
        }
    }

    /// `konto admin webhooks remove NAME`.
    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an endpoint added through the API, with its queued and failed deliveries.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "The endpoint's name.") var name: String

        struct Removed: Encodable { var name: String; var droppedDeliveries: Int }

        func run() async throws {
            try await options.perform { admin, output in
                let dropped = try await admin.removeWebhook(name: name)
                output.answer("Removed \(name) (\(dropped) deliveries dropped).", Removed(name: name, droppedDeliveries: dropped))
            }
        }
    }
}

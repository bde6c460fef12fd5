import ArgumentParser
import Foundation
import KontoClient

/// `konto export [--output FILE] [--current-password]`: a copy of everything Konto holds about the account.
struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Download a copy of everything Konto holds about your account, as one JSON document.",
        discussion: "Security-related: within the privileged window, or give --current-password to sign in again with the password first (with a second factor, run `konto reauthenticate` instead). The document goes to standard output, or to --output, written readable by you alone."
    )

    @OptionGroup var options: GatewayOptions
    @Option(name: .shortAndLong, help: "Write the document to this file (made readable by you alone) instead of standard output.") var output: String?
    @Flag(help: "Ask for the current password and reauthenticate with it first.") var currentPassword = false

    struct Saved: Encodable {
        var path: String
        var bytes: Int
    }

    func run() async throws {
        try await options.perform { client, answer in
            _ = try await client.requireStoredSession()
            if currentPassword {
                _ = try await client.reauthenticate(password: try Terminal.readSecret(prompt: "Current password: "))
            }
            let document = try await client.exportAccount()
            guard let output else {
                Output.write(String(decoding: document, as: UTF8.self) + "\n", to: .standardOutput)
                return
            }
            // Personal data: created readable by its owner alone, not with the umask's defaults.
            let url = URL(fileURLWithPath: output)
            guard FileManager.default.createFile(atPath: url.path, contents: document, attributes: [.posixPermissions: 0o600]) else {
                throw CommandFailure(usage: "Could not write \(output).")
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
            answer.answer("Saved your data to \(output) (\(document.count) bytes).", Saved(path: output, bytes: document.count))
        }
    }
}

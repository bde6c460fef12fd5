import ArgumentParser
import KontoClient

/// `konto delete`: the account and everything kept about it, after the password and a confirmation.
struct Delete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete the account and all its data (asks for the password and a confirmation).",
        discussion: "Not at a terminal, --yes is required and the password is standard input's first line."
    )

    @OptionGroup var options: GatewayOptions
    @Flag(help: "Do not ask for a confirmation.") var yes = false

    struct Answer: Encodable { var deleted: Bool; var accountId: String }

    func run() async throws {
        try await options.perform(passwordOnly: true) { client, output in
            let session = try await client.requireStoredSession()
            if !yes {
                guard Terminal.isInteractive else {
                    throw CommandFailure(usage: "deleting needs --yes when not at a terminal")
                }
                guard try Terminal.ask("Delete account \(session.accountId) and all its data? Type 'delete' to confirm: ") == "delete" else {
                    throw CommandFailure(usage: "not deleted")
                }
            }
            let password = try Terminal.readSecret(prompt: "Password: ")
            try await client.deleteAccount(currentPassword: password)
            output.answer("Account \(session.accountId) deleted.", Answer(deleted: true, accountId: session.accountId))
        }
    }
}

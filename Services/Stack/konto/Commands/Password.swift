import ArgumentParser
import KontoClient

/// `konto password`: asks for the current password (the change is security-related) and the new one.
struct Password: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change the password; every other session of the account ends.",
        discussion: "Asks for the current and the new password at the terminal, or reads them from standard input's first two lines."
    )

    @OptionGroup var options: GatewayOptions

    struct Answer: Encodable { var sessionsEnded: Int }

    func run() async throws {
        try await options.perform(passwordOnly: true) { client, output in
            _ = try await client.requireStoredSession()
            let current = try Terminal.readSecret(prompt: "Current password: ")
            let new = try Terminal.readNewSecret(prompt: "New password: ")
            let ended = try await client.changePassword(to: new, currentPassword: current)
            output.answer("Password changed; \(ended) other session\(ended == 1 ? "" : "s") ended.", Answer(sessionsEnded: ended))
        }
    }
}

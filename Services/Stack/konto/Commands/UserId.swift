import ArgumentParser
import KontoClient

/// `konto user-id NEW`: asks for the password (the change is security-related).
struct UserId: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user-id",
        abstract: "Change the userId the account logs in with.",
        discussion: "Asks for the password at the terminal, or reads it from standard input's first line."
    )

    @OptionGroup var options: GatewayOptions
    @Argument(help: "The new userId.") var userId: String

    struct Answer: Encodable { var userId: String }

    func run() async throws {
        try await options.perform(passwordOnly: true) { client, output in
            _ = try await client.requireStoredSession()
            let password = try Terminal.readSecret(prompt: "Password: ")
            try await client.changeUserId(to: userId, currentPassword: password)
            output.answer("The userId is now \(userId).", Answer(userId: userId))
        }
    }
}

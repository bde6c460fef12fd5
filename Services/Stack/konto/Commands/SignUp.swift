import ArgumentParser
import KontoClient
import KontoModel

/// `konto signup USERID [KEY=VALUE…]`: a new account; the password is asked for (twice at a terminal).
struct SignUp: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signup",
        abstract: "Sign up (an anonymous session stored here is upgraded and keeps its account).",
        discussion: "The password is read from the terminal without echo, or from standard input's first line."
    )

    @OptionGroup var options: GatewayOptions
    @Argument(help: "The new account's userId (an email address unless the deployment uses usernames).") var userId: String
    @Argument(help: "Details to sign up with, as `konto account set` takes them (name=\"Ada Lovelace\" handle=ada).")
    var details: [String] = []

    func run() async throws {
        try await options.perform { client, output in
            let details = details.isEmpty ? nil : try await client.schema().details(fromAssignments: details)
            let password = try Terminal.readNewSecret(prompt: "Password for \(userId): ")
            let signIn = try await client.signUp(userId: userId, password: password, details: details ?? .init())
            output.answer(
                "Signed up as \(userId) (account \(signIn.session.accountId)).",
                SignedIn(accountId: signIn.session.accountId, userId: userId, expiresAt: signIn.session.expiresAt)
            )
        }
    }
}

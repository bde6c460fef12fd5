import ArgumentParser
import KontoClient

/// `konto mail [--new-sign-in on|off] [--current-password]`: the mail the owner may turn off.
struct MailPreferences: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mail",
        abstract: "The mail you may turn off: show it, or turn the notice of sign-ins from new clients on or off.",
        discussion: "Turning a notice off is security-related: within the privileged window, or give --current-password to be asked for the password first. The security notices always go out."
    )

    enum Switch: String, ExpressibleByArgument, CaseIterable { case on, off }

    @OptionGroup var options: GatewayOptions
    @Option(help: "The notice of a sign-in from a client the account was not signed in from before.") var newSignIn: Switch?
    @Flag(help: "Ask for the current password (else the session must be within its privileged window).") var currentPassword = false

    struct Answer: Encodable { var newSignIn: Bool }

    func run() async throws {
        try await options.perform { client, output in
            _ = try await client.requireStoredSession()
            let current = currentPassword ? try Terminal.readSecret(prompt: "Current password: ") : nil
            let preferences = if let newSignIn {
                try await client.setMailPreferences(newSignIn: newSignIn == .on, currentPassword: current)
            } else {
                try await client.mailPreferences()
            }
            output.answer("Sign-ins from new clients: \(preferences.newSignIn ? "mailed" : "not mailed")", Answer(newSignIn: preferences.newSignIn))
        }
    }
}

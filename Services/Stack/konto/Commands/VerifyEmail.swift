import ArgumentParser
import KontoClient

/// `konto verify-email [--token TOKEN | --code CODE]`.
struct VerifyEmail: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-email",
        abstract: "Send a new link confirming the account's email address, or confirm it with a link's token.",
        discussion: """
            Without --token or --code, asks for a new link (signed in). With --token (the token=… part of the link), confirms the address; \
            no session needed. With --code (the 8 digits of the same mail), confirms it for the signed-in account, keeping its session and password.
            """
    )

    @OptionGroup var options: GatewayOptions
    // Unconditional: a link's token is URL-safe base64, which may begin with "-" (one in 64); parsed as an option
    // it would be "missing a value" (seen in CI).
    @Option(parsing: .unconditional, help: "The token from the verification link.") var token: String?
    @Option(help: "The 8-digit code from the verification mail (signed in).") var code: String?

    struct Answer: Encodable { var verified: Bool; var linkRequested: Bool }

    func run() async throws {
        try await options.perform { client, output in
            if token != nil, code != nil {
                throw ValidationError("Give --token or --code, not both.")
            }
            if let code {
                try await client.confirmEmailVerification(code: code)
                output.answer("Email address confirmed.", Answer(verified: true, linkRequested: false))
            } else if let token {
                try await client.confirmEmailVerification(token: token)
                output.answer("Email address confirmed.", Answer(verified: true, linkRequested: false))
            } else {
                try await client.requestEmailVerification()
                output.answer("A new link is on its way, unless the address is confirmed already.", Answer(verified: false, linkRequested: true))
            }
        }
    }
}

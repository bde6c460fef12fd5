import ArgumentParser
import Foundation
import KontoClient

/// `konto reauthenticate`: opens the session's privileged window for the security-related commands, with the
/// password, or with `--code` a code from the authenticator app or a recovery code (what an account with a second
/// factor needs for them).
struct Reauthenticate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Open the privileged window for security-related commands (password, user-id, delete, factors).",
        discussion: "Asks for the password, or with --code for a code from the authenticator app or a recovery code (an account with a second factor needs that), at the terminal or from standard input's first line."
    )

    @OptionGroup var options: GatewayOptions
    @Flag(help: "Use a code from the authenticator app, or a recovery code, instead of the password.") var code = false

    struct Answer: Encodable { var privilegedUntil: Date }

    func run() async throws {
        try await options.perform(passwordOnly: !code) { client, output in
            _ = try await client.requireStoredSession()
            let until: Date
            if code {
                let typed = try Terminal.readSecret(prompt: "Code from the authenticator app (or a recovery code): ")
                let isAppCode = typed.count == 6 && typed.allSatisfy(\.isNumber)
                until = try await client.reauthenticate(code: isAppCode ? typed : nil, recoveryCode: isAppCode ? nil : typed)
            } else {
                until = try await client.reauthenticate(password: try Terminal.readSecret(prompt: "Password: "))
            }
            output.answer("Security-related commands need no password until \(until.formatted(date: .omitted, time: .standard)).", Answer(privilegedUntil: until))
        }
    }
}

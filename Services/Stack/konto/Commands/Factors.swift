import ArgumentParser
import Foundation
import KontoClient
import KontoQRCode

/// `konto factors`: the account's second factors; `konto factors totp` enrols an authenticator app, `konto factors
/// recovery-codes` makes new recovery codes, `konto factors remove ID` removes one.
struct Factors: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The account's second factors: list, enrol an authenticator app (TOTP), recovery codes, remove.",
        subcommands: [List.self, TOTP.self, RecoveryCodes.self, Remove.self],
        defaultSubcommand: List.self
    )

    struct Listed: Encodable {
        var id: String
        var type: String
        var name: String
        var createdAt: Date
        var lastUsedAt: Date?
        var pending: Bool
        var remaining: Int?
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the account's second factors.")
        @OptionGroup var options: GatewayOptions

        func run() async throws {
            try await options.perform { client, output in
                _ = try await client.requireStoredSession()
                let factors = try await client.factors()
                let lines = factors.map { factor in
                    var line = "\(factor.id)  \(factor.type)  \(factor.name)"
                    if factor.isPending { line += "  (awaiting its first code)" }
                    if let remaining = factor.remaining { line += "  (\(remaining) unused)" }
                    return line
                }
                output.answer(
                    lines.isEmpty ? "No second factor: the password alone signs in." : lines.joined(separator: "\n"),
                    factors.map { Listed(id: $0.id, type: $0.type, name: $0.name, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt, pending: $0.isPending, remaining: $0.remaining) }
                )
            }
        }
    }

    struct TOTP: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "totp",
            abstract: "Enrol an authenticator app: prints the otpauth URI and the secret, then asks for a first code to confirm it.",
            discussion: "Security-related: within the privileged window, or give --current-password to be asked for the password. The code is read from the terminal, or from standard input's next line."
        )
        @OptionGroup var options: GatewayOptions
        @Flag(help: "Ask for the current password (else the session must be within its privileged window).") var currentPassword = false

        struct Answer: Encodable { var factorId: String; var otpauthURI: String; var secret: String }

        func run() async throws {
            try await options.perform(passwordOnly: true) { client, output in
                _ = try await client.requireStoredSession()
                let current = currentPassword ? try Terminal.readSecret(prompt: "Current password: ") : nil
                let enrolment = try await client.enrollTOTP(currentPassword: current)
                // The QR code at a terminal only: a script reads the URI and the secret.
                if Terminal.isInteractive, let code = try? QRCode(enrolment.otpauthURI) {
                    Output.note("Scan this with your authenticator app:\n\(code.terminal())\n")
                }
                Output.note("Or add it by hand:\n  \(enrolment.otpauthURI)\n  secret: \(enrolment.secret)\n")
                let code = try Terminal.ask("Code from the app, to confirm: ")
                try await client.confirmTOTP(factorId: enrolment.factorId, code: code.trimmingCharacters(in: .whitespaces))
                output.answer(
                    "Authenticator app added: from now on a login asks for its code. Make recovery codes too: `konto reauthenticate --code` with the app's next code, then `konto factors recovery-codes`",
                    Answer(factorId: enrolment.factorId, otpauthURI: enrolment.otpauthURI, secret: enrolment.secret)
                )
            }
        }
    }

    struct RecoveryCodes: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "recovery-codes",
            abstract: "Make ten new recovery codes (each signs in once), replacing every earlier one; shown once."
        )
        @OptionGroup var options: GatewayOptions
        @Flag(help: "Ask for the current password (an account without a second factor, outside the privileged window).") var currentPassword = false

        func run() async throws {
            try await options.perform(passwordOnly: true) { client, output in
                _ = try await client.requireStoredSession()
                let current = currentPassword ? try Terminal.readSecret(prompt: "Current password: ") : nil
                let codes = try await client.regenerateRecoveryCodes(currentPassword: current)
                output.answer("Keep these somewhere safe; each signs in once:\n" + codes.map { "  \($0)" }.joined(separator: "\n"), codes)
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Remove a second factor (security-related: reauthenticate with a code first when the account has one)."
        )
        @OptionGroup var options: GatewayOptions
        @Argument(help: "The factor's id (konto factors).") var factorId: String

        struct Answer: Encodable { var remainingFactors: Int }

        func run() async throws {
            try await options.perform { client, output in
                _ = try await client.requireStoredSession()
                let left = try await client.removeFactor(id: factorId)
                output.answer(
                    left == 0 ? "Removed. No second factor is left: the password alone signs in again." : "Removed; \(left) second factor\(left == 1 ? "" : "s") left.",
                    Answer(remainingFactors: left)
                )
            }
        }
    }
}

import ArgumentParser
import KontoClient

/// `konto logout [--everywhere]`.
struct LogOut: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "logout", abstract: "End this session (or every session of the account).")

    @OptionGroup var options: GatewayOptions
    @Flag(help: "End every session of the account, on every device, and every application's sign-in.") var everywhere = false

    struct Answer: Encodable { var sessionsEnded: Int? }

    func run() async throws {
        try await options.perform { client, output in
            if everywhere {
                let ended = try await client.logOutEverywhere()
                output.answer("Logged out of \(ended) session\(ended == 1 ? "" : "s").", Answer(sessionsEnded: ended))
            } else {
                try await client.logOut()
                output.answer("Logged out.", Answer(sessionsEnded: nil))
            }
        }
    }
}

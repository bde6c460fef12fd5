import ArgumentParser
import KontoClient
import KontoModel

/// `konto whoami`: whose session is stored, as the gateway sees it now.
struct WhoAmI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "whoami", abstract: "Show who is logged in.")

    @OptionGroup var options: GatewayOptions

    struct Answer: Encodable {
        var accountId: String
        var userId: String?
        var isAnonymous: Bool
    }

    func run() async throws {
        try await options.perform { client, output in
            // Asked of the gateway, so an ended session says so instead of being reported as signed in, and a userId
            // changed on another device is the new one.
            let account = try await client.account()
            let userId = account[\.userId]
            output.answer(
                "\(userId ?? "anonymous") (account \(account.accountId))",
                Answer(accountId: account.accountId, userId: userId, isAnonymous: account.isAnonymous)
            )
        }
    }
}

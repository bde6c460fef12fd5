import ArgumentParser
import Foundation
import KontoClient
import KontoModel

/// `konto events`: the account's events from now (or after `--after`), as they happen, until the session ends or
/// Ctrl-C.
struct Events: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Follow the account's events (Ctrl-C stops).")

    @OptionGroup var options: GatewayOptions
    @Option(help: "Resume after this event id.") var after: String?

    struct Line: Encodable {
        var id: String
        var type: String
        /// The event's JSON as an object, not a string in a string.
        var data: AccountValue?
    }

    func run() async throws {
        try await options.perform { client, output in
            let events = try await client.events(after: after)
            // On standard error, so standard output stays the events alone; from here on nothing is missed.
            FileHandle.standardError.write(Data("Following the account's events (Ctrl-C stops).\n".utf8))
            for try await event in events {
                output.answer(
                    "\(event.id)  \(event.type)  \(event.data)",
                    Line(id: event.id, type: event.type, data: try? JSONDecoder().decode(AccountValue.self, from: Data(event.data.utf8)))
                )
            }
        }
    }
}

import ArgumentParser
import Foundation
import KontoClient

/// `konto admin deliveries`: the mail and webhook deliveries Notifications gave up on.
struct AdminDeliveries: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deliveries",
        abstract: "The mail and webhook deliveries Notifications gave up on: list them, deliver them again (scope deliveries:write).",
        subcommands: [Failed.self, Redeliver.self]
    )

    /// `konto admin deliveries failed GROUP`.
    struct Failed: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A group's failed deliveries, oldest first: mail, or webhook:<name>.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "mail, or webhook:<name>.") var group: String
        @Option(help: "At most this many (1 to 1000, default 100).") var limit: Int?

        func validate() throws {
            if let limit, !(1...1_000).contains(limit) { throw ValidationError("--limit is 1 to 1000") }
        }

        func run() async throws {
            try await options.perform { admin, output in
                let found = try await admin.failedDeliveries(group: group, limit: limit)
                var lines = found.map {
                    "\($0.eventId)  \($0.type)\($0.message.map { " (\($0))" } ?? "")  \($0.accountId)  \($0.attempts) attempts  \($0.lastError ?? "")"
                }
                lines.append("\(found.count) failed")
                output.answer(lines.joined(separator: "\n"), found)
            }
        }
    }

    /// `konto admin deliveries redeliver GROUP [--event ID …]`.
    struct Redeliver: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Deliver a group's failed deliveries again: all, or the events named.")
        @OptionGroup var options: AdminOptions
        @Argument(help: "mail, or webhook:<name>.") var group: String
        @Option(name: .customLong("event"), help: "An event's id (repeatable); every failed one without.") var events: [String] = []

        struct Redelivered: Encodable { var group: String; var redelivered: Int }

        func run() async throws {
            try await options.perform { admin, output in
                let count = try await admin.redeliver(group: group, eventIds: events.isEmpty ? nil : events)
                output.answer("\(count) queued again for \(group).", Redelivered(group: group, redelivered: count))
            }
        }
    }
}

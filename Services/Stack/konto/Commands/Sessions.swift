import ArgumentParser
import Foundation
import KontoClient

/// `konto sessions`: where the account is signed in; `konto sessions end ID` ends one, `konto sessions end-others`
/// every other.
struct Sessions: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Where the account is signed in: list the sessions, end one, or end every other.",
        subcommands: [List.self, End.self, EndOthers.self],
        defaultSubcommand: List.self
    )

    struct Listed: Encodable {
        var id: String
        var current: Bool
        var createdAt: Date
        var lastUsedAt: Date?
        var absoluteExpiresAt: Date
        var assuranceLevel: Int
        var signInMethod: String?
        var clientAddress: String?
        var clientName: String?
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the account's live sessions, oldest first.")
        @OptionGroup var options: GatewayOptions

        func run() async throws {
            try await options.perform { client, output in
                _ = try await client.requireStoredSession()
                let sessions = try await client.deviceSessions()
                let lines = sessions.map { session in
                    let used = (session.lastUsedAt ?? session.createdAt).formatted(.iso8601)
                    let client = [session.clientName, session.clientAddress].compactMap { $0 }.joined(separator: ", ")
                    return "\(session.id)\(session.isCurrent ? " (this one)" : "")  \(session.signInMethod ?? "unknown")  last used \(used)  \(client.isEmpty ? "unknown client" : client)"
                }
                output.answer(lines.joined(separator: "\n"), sessions.map {
                    Listed(
                        id: $0.id, current: $0.isCurrent, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt, absoluteExpiresAt: $0.absoluteExpiresAt,
                        assuranceLevel: $0.assuranceLevel, signInMethod: $0.signInMethod, clientAddress: $0.clientAddress, clientName: $0.clientName
                    )
                })
            }
        }
    }

    struct End: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "end",
            abstract: "End one session (this one is a logout; another is security-related).",
            discussion: "Ending another session needs the privileged window, or give --current-password to be asked for the password first."
        )
        @OptionGroup var options: GatewayOptions
        @Argument(help: "The session's id (konto sessions).") var sessionId: String
        @Flag(help: "Ask for the current password (else the session must be within its privileged window).") var currentPassword = false

        struct Answer: Encodable { var ended: String }

        func run() async throws {
            try await options.perform { client, output in
                _ = try await client.requireStoredSession()
                let current = currentPassword ? try Terminal.readSecret(prompt: "Current password: ") : nil
                try await client.endSession(id: sessionId, currentPassword: current)
                output.answer("Ended session \(sessionId).", Answer(ended: sessionId))
            }
        }
    }

    struct EndOthers: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "end-others",
            abstract: "Sign out every other device: end every session but this one (security-related)."
        )
        @OptionGroup var options: GatewayOptions
        @Flag(help: "Ask for the current password (else the session must be within its privileged window).") var currentPassword = false

        struct Answer: Encodable { var sessionsEnded: Int }

        func run() async throws {
            try await options.perform { client, output in
                _ = try await client.requireStoredSession()
                let current = currentPassword ? try Terminal.readSecret(prompt: "Current password: ") : nil
                let ended = try await client.endOtherSessions(currentPassword: current)
                output.answer("Ended \(ended) other session\(ended == 1 ? "" : "s").", Answer(sessionsEnded: ended))
            }
        }
    }
}

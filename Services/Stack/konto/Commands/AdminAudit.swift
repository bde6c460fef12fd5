import ArgumentParser
import Foundation
import KontoClient

/// `konto admin audit`: the audit log through the admin API (scope audit:read).
struct AdminAudit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "The audit log: list its entries, verify its hash chain (scope audit:read).",
        subcommands: [List.self, Verify.self]
    )

    /// `konto admin audit list`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Entries matching every filter given, newest first.")
        @OptionGroup var options: AdminOptions
        @Option(help: "Entries about this account.") var account: String?
        @Option(help: "Entries made by this account or operator key.") var actor: String?
        @Option(help: "Entries of this type (signIn.failed, password.changed, account.disabled, admin.disableAccount …).") var type: String?
        @Option(help: ArgumentHelp("At or after this time.", valueName: "ISO 8601")) var after: String?
        @Option(help: ArgumentHelp("Before this time.", valueName: "ISO 8601")) var before: String?
        @Option(help: "Where the previous page ended (its next cursor).") var cursor: String?
        @Option(help: "At most this many (1 to 500, default 100).") var limit: Int?

        struct Page: Encodable { var entries: [KontoAuditEntry]; var nextCursor: String? }

        static func date(_ text: String?, _ option: String) throws -> Date? {
            guard let text else { return nil }
            guard let date = try? Date(text, strategy: .iso8601) else { throw ValidationError("--\(option) is not an ISO 8601 time (2026-11-28T10:00:00Z)") }
            return date
        }

        func validate() throws {
            if let limit, !(1...500).contains(limit) { throw ValidationError("--limit is 1 to 500") }
            _ = try Self.date(after, "after")
            _ = try Self.date(before, "before")
        }

        func run() async throws {
            let query = KontoAuditQuery(
                accountId: account, actorId: actor, type: type, occurredAfter: try Self.date(after, "after"), occurredBefore: try Self.date(before, "before"),
                cursor: cursor, limit: limit
            )
            try await options.perform { admin, output in
                let page = try await admin.audit(query)
                var lines = page.entries.map { entry in
                    let actor = entry.actorId.map { "\(entry.actorType) \($0)" } ?? entry.actorType
                    let facts = entry.facts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
                    let personal = entry.personal.map { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") } ?? (entry.erased ? "(erased)" : "")
                    return "\(entry.position.map(String.init) ?? "-")  \(entry.occurredAt.formatted(.iso8601))  \(entry.type)  account \(entry.accountId ?? "-")  by \(actor)  \(facts)  \(personal)"
                }
                if let next = page.nextCursor { lines.append("next page: --cursor \(next)") }
                output.answer(lines.isEmpty ? "No entries." : lines.joined(separator: "\n"), Page(entries: page.entries, nextCursor: page.nextCursor))
            }
        }
    }

    /// `konto admin audit verify`: exits 1 when the chain is broken.
    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the hash chain from its anchor to its head: a changed or removed entry is reported at its position (exit 1)."
        )
        @OptionGroup var options: AdminOptions

        func run() async throws {
            var intact = true
            try await options.perform { admin, output in
                let found = try await admin.verifyAudit()
                intact = found.intact
                let text = found.intact
                    ? "The audit log is intact: \(found.entriesChecked) entries from position \(found.anchorPosition + 1) to \(found.headPosition); head \(found.headHash)."
                    : "The audit log is broken at position \(found.brokenAt.map(String.init) ?? "?"): \(found.problem ?? "unknown problem") (\(found.entriesChecked) entries verified before it)."
                output.answer(text, found)
            }
            if !intact { throw ExitCode(1) }
        }
    }
}

import ArgumentParser
import Foundation
import KontoClient
import KontoModel

/// `konto account show|set|remove`: the signed-in account's details.
struct AccountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "account",
        abstract: "Show or change the account's details.",
        subcommands: [Show.self, Set.self, Remove.self],
        defaultSubcommand: Show.self
    )

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the account's details.")
        @OptionGroup var options: GatewayOptions

        func run() async throws {
            try await options.perform { client, output in
                let account = try await client.account()
                let order = output.json ? [] : (try? await client.schema().keys.map(\.identifier)) ?? []
                output.answer(AccountText.render(account, order: order), AccountDocument(account))
            }
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set details: KEY=VALUE… (name=\"Ada Lovelace\", name.givenName=Ada, dateOfBirth=1815-12-10, phoneNumbers=… repeated).",
            discussion: "Values are read as their key's type (`konto schema`); the gateway validates them."
        )
        @OptionGroup var options: GatewayOptions
        @Argument(help: "KEY=VALUE assignments.") var assignments: [String]
        @Option(help: "Refuse the change if the details changed since this version was read.") var ifVersion: Int64?

        func validate() throws {
            guard !assignments.isEmpty else { throw ValidationError("what to set? KEY=VALUE…") }
        }

        func run() async throws {
            try await options.perform { client, output in
                let schema = try await client.schema()
                let current = KontoSchema.setsParts(assignments) ? try await client.account().details : nil
                let details = try schema.details(fromAssignments: assignments, current: current)
                let account = try await client.modify(set: details, ifVersion: ifVersion)
                output.answer(AccountText.render(account, order: schema.keys.map(\.identifier)), AccountDocument(account))
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove details: KEY…")
        @OptionGroup var options: GatewayOptions
        @Argument(help: "The keys to remove.") var keys: [String]
        @Option(help: "Refuse the change if the details changed since this version was read.") var ifVersion: Int64?

        func validate() throws {
            guard !keys.isEmpty else { throw ValidationError("which keys? KEY…") }
        }

        func run() async throws {
            try await options.perform { client, output in
                let schema = try await client.schema()
                let account = try await client.modify(remove: try schema.removableKeys(keys), ifVersion: ifVersion)
                output.answer(AccountText.render(account, order: schema.keys.map(\.identifier)), AccountDocument(account))
            }
        }
    }
}

/// An account in JSON, as `GET /v1/account` gives it.
struct AccountDocument: Encodable {
    var accountId: String
    var version: Int64
    var isAnonymous: Bool
    var details: AccountDetails

    init(_ account: KontoAccount) {
        accountId = account.accountId
        version = account.version
        isAnonymous = account.isAnonymous
        details = account.details
    }
}

/// An account for people: one `key  value` line per detail, in the schema's order.
enum AccountText {
    static func render(_ account: KontoAccount, order: [String]) -> String {
        let values = account.details.publicValues
        // The account id is in the first line already.
        let shown = values.filter { $0.key != "accountId" }
        let identifiers = order.filter { shown[$0] != nil } + shown.keys.filter { !order.contains($0) }.sorted()
        let width = identifiers.map(\.count).max() ?? 0
        var lines = ["account \(account.accountId)\(account.isAnonymous ? " (anonymous)" : "") version \(account.version)"]
        for identifier in identifiers {
            guard let value = shown[identifier] else { continue }
            lines.append("  " + identifier.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + text(value))
        }
        return lines.joined(separator: "\n")
    }

    static func text(_ value: AccountValue) -> String {
        switch value {
        case let .string(text): text
        case let .bool(flag): flag ? "true" : "false"
        case let .integer(number): String(number)
        case let .double(number): String(number)
        case let .array(items): items.map(text).joined(separator: ", ")
        case let .object(members):
            // A name reads in its parts' order; another object by its members' names.
            PersonName.componentNames.compactMap { members[$0].map(text) }.joined(separator: " ").nonEmpty
                ?? members.sorted { $0.key < $1.key }.map { "\($0.key)=\(text($0.value))" }.joined(separator: " ")
        case .null: "null"
        }
    }
}

extension String {
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}

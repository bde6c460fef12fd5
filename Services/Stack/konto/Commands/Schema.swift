import ArgumentParser
import Foundation
import KontoClient
import KontoModel

/// `konto schema`: the deployment's keys, what `account set` and `signup` take.
struct Schema: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the deployment's account keys.")

    @OptionGroup var options: GatewayOptions

    func run() async throws {
        try await options.perform { client, output in
            let schema = try await client.schema()
            output.answer(Self.render(schema), schema)
        }
    }

    /// One key a line in aligned columns: identifier, requirement, type, then the name (the type's column is as wide
    /// as the widest type but an enum's list of cases, which goes after the name so that it does not push every line).
    static func render(_ schema: KontoSchema) -> String {
        func padded(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
        let identifierWidth = schema.keys.map(\.identifier.count).max() ?? 0
        let requirementWidth = schema.keys.map(\.requirement.rawValue.count).max() ?? 0
        let typeWidth = schema.keys.map(\.valueType.name.count).max() ?? 0
        var lines = ["userId: \(schema.userIdType.rawValue)"]
        for key in schema.keys {
            var line = "  " + padded(key.identifier, identifierWidth) + "  " + padded(key.requirement.rawValue, requirementWidth)
                + "  " + padded(key.valueType.name, typeWidth) + "  " + key.name
            if case let .enumeration(cases: cases) = key.valueType { line += " (" + cases.joined(separator: ", ") + ")" }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}

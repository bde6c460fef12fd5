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

    static func render(_ schema: KontoSchema) -> String {
        let width = schema.keys.map(\.identifier.count).max() ?? 0
        var lines = ["userId: \(schema.userIdType.rawValue)"]
        for key in schema.keys {
            var type = key.valueType.name
            if case let .enumeration(cases: cases) = key.valueType { type += " (" + cases.joined(separator: ", ") + ")" }
            lines.append(
                "  " + key.identifier.padding(toLength: width, withPad: " ", startingAt: 0)
                    + "  \(key.requirement.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0))  \(type)  \(key.name)"
            )
        }
        return lines.joined(separator: "\n")
    }
}

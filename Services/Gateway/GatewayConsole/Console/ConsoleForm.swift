import GatewayService
import Hummingbird

/// A submitted console form (`application/x-www-form-urlencoded`), decoded by Hummingbird's form decoder into its
/// fields: `key=value`, `key[]=a&key[]=b` (a list), `key[part]=value` (an object's members, the name's parts).
/// The body was already bounded by ``BodyLimitMiddleware``.
struct ConsoleForm: Decodable, Sendable {
    enum Value: Sendable, Equatable {
        case text(String)
        case list([String])
        case parts([String: String])
    }

    private(set) var values: [String: Value] = [:]

    init(_ values: [String: Value] = [:]) {
        self.values = values
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        for key in container.allKeys {
            if let text = try? container.decode(String.self, forKey: key) {
                values[key.stringValue] = .text(text)
            } else if let list = try? container.decode([String].self, forKey: key) {
                values[key.stringValue] = .list(list)
            } else if let parts = try? container.decode([String: String].self, forKey: key) {
                values[key.stringValue] = .parts(parts)
            }
        }
    }

    /// The text of a single field; `nil` when absent or not a single value.
    subscript(_ name: String) -> String? {
        if case .text(let text) = values[name] { return text }
        return nil
    }

    /// A list's items (`name[]`); a single value counts as a list of one.
    func list(_ name: String) -> [String] {
        switch values[name] {
        case .list(let items): items
        case .text(let text): [text]
        default: []
        }
    }

    /// An object's members (`name[part]`).
    func parts(_ name: String) -> [String: String] {
        if case .parts(let parts) = values[name] { return parts }
        return [:]
    }

    /// Decodes `body` (at most the gateway's body limit); a body that is no form gives an empty one, whose missing
    /// fields are then reported like any other.
    static func decode(_ body: String) -> ConsoleForm {
        (try? URLEncodedFormDecoder().decode(ConsoleForm.self, from: body)) ?? ConsoleForm()
    }
}

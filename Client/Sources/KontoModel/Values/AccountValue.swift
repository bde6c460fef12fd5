import Foundation

/// The dynamic, JSON-shaped storage of one account value.
///
/// Services cannot compile an app's Swift types, so ``AccountDetails`` keeps every value in this form
/// and typed ``AccountKey``s convert to and from it through `Codable`.
/// Dates travel as ISO 8601 strings (see ``CalendarDate``), so there is no separate date case.
public enum AccountValue: Sendable, Codable, CustomStringConvertible {
    case string(String)
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case array([AccountValue])
    case object([String: AccountValue])
    case null

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([AccountValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: AccountValue].self) {
            self = .object(value)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Not a JSON value.")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case let .string(value): try container.encode(value)
        case let .bool(value): try container.encode(value)
        case let .integer(value): try container.encode(value)
        case let .double(value): try container.encode(value)
        case let .array(value): try container.encode(value)
        case let .object(value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }

    /// A short name of the JSON kind, used in messages (never the value itself).
    public var kindName: String {
        switch self {
        case .string: "string"
        case .bool: "bool"
        case .integer: "integer"
        case .double: "double"
        case .array: "array"
        case .object: "object"
        case .null: "null"
        }
    }

    public var description: String {
        switch self {
        case let .string(value): String(reflecting: value)
        case let .bool(value): String(value)
        case let .integer(value): String(value)
        case let .double(value): String(value)
        case let .array(values): "[" + values.map(\.description).joined(separator: ", ") + "]"
        case let .object(values):
            "{" + values.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .null: "null"
        }
    }
}

extension AccountValue: Equatable {
    /// JSON does not tell `1` from `1.0`, so an integral double equals the same integer;
    /// otherwise a value would change after a round trip through JSON.
    public static func == (lhs: AccountValue, rhs: AccountValue) -> Bool {
        switch (lhs, rhs) {
        case let (.string(left), .string(right)): left == right
        case let (.bool(left), .bool(right)): left == right
        case let (.integer(left), .integer(right)): left == right
        case let (.double(left), .double(right)): left == right
        case let (.integer(left), .double(right)), let (.double(right), .integer(left)):
            Double(exactly: left) == right
        case let (.array(left), .array(right)): left == right
        case let (.object(left), .object(right)): left == right
        case (.null, .null): true
        default: false
        }
    }
}

extension AccountValue: Hashable {
    /// Consistent with ``==``: a number hashes as the double it equals when there is one, so `1` and `1.0` hash alike.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case let .string(value): hasher.combine(0); hasher.combine(value)
        case let .bool(value): hasher.combine(1); hasher.combine(value)
        case let .integer(value):
            if let double = Double(exactly: value) {
                hasher.combine(2); hasher.combine(double)
            } else {
                hasher.combine(3); hasher.combine(value)
            }
        case let .double(value): hasher.combine(2); hasher.combine(value)
        case let .array(values): hasher.combine(4); hasher.combine(values)
        case let .object(values): hasher.combine(5); hasher.combine(values)
        case .null: hasher.combine(6)
        }
    }
}

/// The type of an account key's value as services see it, for type checks and the published schema.
public enum AccountValueType: Sendable, Hashable {
    case string
    case bool
    case integer
    case double
    /// A calendar date string `"yyyy-MM-dd"` (see ``CalendarDate``).
    case date
    /// A string that must be one of the cases.
    case enumeration(cases: [String])
    case stringList
    /// An object with the optional string fields of ``PersonName``; built-in keys only.
    case personName

    /// The type names a schema file may use.
    public static let declarableNames = ["string", "bool", "integer", "double", "date", "enum", "stringList"]

    /// The stable name used in schema files and the published schema.
    public var name: String {
        switch self {
        case .string: "string"
        case .bool: "bool"
        case .integer: "integer"
        case .double: "double"
        case .date: "date"
        case .enumeration: "enum"
        case .stringList: "stringList"
        case .personName: "personName"
        }
    }
}

extension AccountValueType: Codable {
    private enum CodingKeys: String, CodingKey {
        case type
        case cases
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let name = try container.decode(String.self, forKey: .type)
        switch name {
        case "string": self = .string
        case "bool": self = .bool
        case "integer": self = .integer
        case "double": self = .double
        case "date": self = .date
        case "enum": self = .enumeration(cases: try container.decode([String].self, forKey: .cases))
        case "stringList": self = .stringList
        case "personName": self = .personName
        default:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "Unknown value type \"\(name)\".")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .type)
        if case let .enumeration(cases) = self {
            try container.encode(cases, forKey: .cases)
        }
    }
}

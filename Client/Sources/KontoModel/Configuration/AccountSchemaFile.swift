/// The raw form of a deployment key schema file (YAML or JSON), before it is checked.
///
/// ```yaml
/// userIdType: emailAddress        # or username
/// unknownKeys: reject             # or keep
/// supportedKeys: arbitrary        # or a list of identifiers
/// keys:                           # the configured keys, in order
///   - identifier: userId          # a built-in key: identifier, requirement, optional rules
///     requirement: requires
///   - identifier: biography       # a custom key: also a type, and optionally name, category, …
///     name: Biography
///     category: personalDetails
///     type: string                # string, bool, integer, double, date, enum, stringList ("[string]")
///     requirement: collects
///     rules:
///       - nonEmpty                # a built-in rule by name
///       - pattern: ".{0,280}"     # or a custom rule (whole-string match)
///         message: "At most 280 characters."
///     mutable: true
///     display: true
/// ```
/// Everything is read as plain strings so that ``AccountConfiguration/init(schemaFile:source:)`` can name the
/// key and the problem instead of failing on the first decoding error.
public struct AccountSchemaFile: Decodable, Sendable, Equatable {
    public var userIdType: String?
    public var unknownKeys: String?
    public var supportedKeys: SupportedKeysEntry?
    public var keys: [KeyEntry]
    /// Top-level fields that are not part of the format (likely typos).
    public var unknownFields: [String]

    /// `"arbitrary"` or a list of identifiers.
    public enum SupportedKeysEntry: Decodable, Sendable, Equatable {
        case name(String)
        case identifiers([String])

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let identifiers = try? container.decode([String].self) {
                self = .identifiers(identifiers)
            } else {
                self = .name(try container.decode(String.self))
            }
        }
    }

    /// One configured key: a reference to a built-in key or a custom key declaration.
    public struct KeyEntry: Decodable, Sendable, Equatable {
        public var identifier: String?
        public var name: String?
        public var category: String?
        public var type: String?
        public var cases: [String]?
        public var requirement: String?
        public var rules: [RuleEntry]?
        public var mutable: Bool?
        public var display: Bool?
        /// `user` (the default) or `server`.
        public var writableBy: String?
        /// Fields that are not part of the format (likely typos).
        public var unknownFields: [String]

        static let fieldNames: Set<String> = ["identifier", "name", "category", "type", "cases", "requirement", "rules", "mutable", "display", "writableBy"]

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: FieldKey.self)
            func field<T: Decodable>(_ name: String, _ type: T.Type) throws -> T? {
                try container.decodeIfPresent(T.self, forKey: FieldKey(name))
            }
            identifier = try field("identifier", String.self)
            name = try field("name", String.self)
            category = try field("category", String.self)
            type = try field("type", String.self)
            cases = try field("cases", [String].self)
            requirement = try field("requirement", String.self)
            rules = try field("rules", [RuleEntry].self)
            mutable = try field("mutable", Bool.self)
            display = try field("display", Bool.self)
            writableBy = try field("writableBy", String.self)
            unknownFields = container.allKeys.map(\.stringValue).filter { !Self.fieldNames.contains($0) }.sorted()
        }
    }

    /// A built-in rule by name, or a custom rule `{pattern, message, name?}`.
    public enum RuleEntry: Decodable, Sendable, Equatable {
        case builtIn(String)
        case custom(name: String?, pattern: String?, message: String?, maxLength: Int? = nil)

        public init(from decoder: any Decoder) throws {
            if let name = try? decoder.singleValueContainer().decode(String.self) {
                self = .builtIn(name)
                return
            }
            let container = try decoder.container(keyedBy: FieldKey.self)
            self = .custom(
                name: try container.decodeIfPresent(String.self, forKey: FieldKey("name")),
                pattern: try container.decodeIfPresent(String.self, forKey: FieldKey("pattern")),
                message: try container.decodeIfPresent(String.self, forKey: FieldKey("message")),
                maxLength: try container.decodeIfPresent(Int.self, forKey: FieldKey("maxLength"))
            )
        }
    }

    static let fieldNames: Set<String> = ["userIdType", "unknownKeys", "supportedKeys", "keys"]

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: FieldKey.self)
        userIdType = try container.decodeIfPresent(String.self, forKey: FieldKey("userIdType"))
        unknownKeys = try container.decodeIfPresent(String.self, forKey: FieldKey("unknownKeys"))
        supportedKeys = try container.decodeIfPresent(SupportedKeysEntry.self, forKey: FieldKey("supportedKeys"))
        keys = try container.decodeIfPresent([KeyEntry].self, forKey: FieldKey("keys")) ?? []
        unknownFields = container.allKeys.map(\.stringValue).filter { !Self.fieldNames.contains($0) }.sorted()
    }
}

import Foundation
import KontoModel
import Yams

extension OpenAPIDocument {
    /// Keys that never travel among the details: the credentials have their own fields and routes.
    static let credentialKeys = AccountModifications.credentialKeys

    /// The document as served: openapi.yaml with the deployment's account keys written into the request schemas
    /// (the details a sign-up takes and which of them it requires, the keys a modification may set and remove,
    /// each value's JSON type, the rules of userId, password and every string key as patterns), so what the
    /// document calls valid is what the services accept. The generated server keeps the file's free-form details;
    /// the services check them. Each operation's refusals are declared status by status (``describeProblems(in:)``).
    static func served(for accounts: AccountConfiguration, listener: Listener = .public) -> Data {
        do {
            guard var document = try Yams.load(yaml: yaml) as? [String: Any] else { throw CocoaError(.fileReadCorruptFile) }
            restrict(&document, to: listener)
            describeAccounts(accounts, in: &document)
            describeProblems(in: &document)
            return try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
        } catch {
            preconditionFailure("openapi.yaml does not convert to JSON: \(error)")
        }
    }

    /// Which listener a document is served on: the public one's has no admin path, the admin one's only those.
    enum Listener: Sendable {
        case `public`
        case admin
    }

    /// Whether a path is the admin API's (served on the admin listener alone).
    static func isAdminPath(_ path: String) -> Bool {
        path.hasPrefix("/admin/")
    }

    static func restrict(_ document: inout [String: Any], to listener: Listener) {
        let paths = document["paths"] as? [String: Any] ?? [:]
        document["paths"] = paths.filter { isAdminPath($0.key) == (listener == .admin) }
        let tags = document["tags"] as? [[String: Any]] ?? []
        document["tags"] = tags.filter { ($0["name"] as? String == "admin") == (listener == .admin) }
        if listener == .public, var components = document["components"] as? [String: Any], var schemes = components["securitySchemes"] as? [String: Any] {
            schemes["operatorKey"] = nil
            components["securitySchemes"] = schemes
            document["components"] = components
        }
        if listener == .admin, var info = document["info"] as? [String: Any] {
            info["title"] = "Konto admin API"
            info["description"] = "The admin API (docs/ADMIN.md): operator keys with scopes, account search and records. Served on the gateway's admin listener only."
            document["info"] = info
        }
    }

    static func describeAccounts(_ accounts: AccountConfiguration, in document: inout [String: Any]) {
        var components = document["components"] as? [String: Any] ?? [:]
        var schemas = components["schemas"] as? [String: Any] ?? [:]

        schemas["UserId"] = merging(schemas["UserId"], rules: accounts.rules(for: UserIdKey.identifier))
        schemas["Password"] = merging(schemas["Password"], rules: accounts.rules(for: PasswordKey.identifier))

        let keys = accounts.schema.descriptors.filter { !credentialKeys.contains($0.identifier) }
        let properties = Dictionary(uniqueKeysWithValues: keys.map { ($0.identifier, valueSchema($0, accounts: accounts)) })
        let required = accounts.requiredIdentifiers.filter { !credentialKeys.contains($0) }
        var signUpDetails: [String: Any] = [
            "type": "object",
            "description": "The account's details by key identifier (GET /v1/schema lists the keys).",
            "properties": properties,
        ]
        if !required.isEmpty { signUpDetails["required"] = required }
        closeOrGuard(&signUpDetails, accounts: accounts)
        schemas["SignUpDetails"] = signUpDetails
        if var signUp = schemas["SignUpRequest"] as? [String: Any], var signUpProperties = signUp["properties"] as? [String: Any] {
            signUpProperties["details"] = ["$ref": "#/components/schemas/SignUpDetails"]
            signUp["properties"] = signUpProperties
            if !required.isEmpty { signUp["required"] = ((signUp["required"] as? [String]) ?? []) + ["details"] }
            schemas["SignUpRequest"] = signUp
        }

        // A modification sets mutable keys and removes mutable keys that are not required; one key not both.
        let mutable = keys.filter { $0.options.contains(.mutable) }
        var setSchema: [String: Any] = [
            "type": "object",
            "properties": Dictionary(uniqueKeysWithValues: mutable.map { ($0.identifier, valueSchema($0, accounts: accounts)) }),
        ]
        closeOrGuard(&setSchema, accounts: accounts)
        let removable = mutable.map(\.identifier).filter { accounts.requirement(for: $0) != .requires }
        let removeSchema: [String: Any] = removable.isEmpty
            ? ["type": "array", "maxItems": 0, "items": ["type": "string"]]
            : ["type": "array", "items": ["type": "string", "enum": removable]]
        schemas["Modifications"] = [
            "type": "object",
            "description": "Set and remove details in one atomic change; a key is either set or removed.",
            "properties": ["set": setSchema, "remove": removeSchema],
            "allOf": removable.map { key -> [String: Any] in
                [
                    "if": ["required": ["remove"], "properties": ["remove": ["contains": ["const": key]]]],
                    "then": ["properties": ["set": ["not": ["required": [key]]]]],
                ]
            },
        ]

        // An optional field sent as null is taken as absent (the generated decoder does so): say so.
        for (schema, property) in [("SignUpRequest", "details"), ("PasswordChange", "currentPassword"), ("UserIdChange", "currentPassword"), ("AccountDeletion", "currentPassword")] {
            allowNull(property, of: schema, in: &schemas)
        }
        if var modifications = schemas["Modifications"] as? [String: Any], var properties = modifications["properties"] as? [String: Any] {
            for property in ["set", "remove"] {
                properties[property] = ["anyOf": [properties[property] ?? [:], ["type": "null"]]]
            }
            modifications["properties"] = properties
            schemas["Modifications"] = modifications
        }

        components["schemas"] = schemas
        document["components"] = components
    }

    private static func allowNull(_ property: String, of schema: String, in schemas: inout [String: Any]) {
        guard var object = schemas[schema] as? [String: Any], var properties = object["properties"] as? [String: Any], let original = properties[property] else {
            return
        }
        properties[property] = ["anyOf": [original, ["type": "null"]]]
        object["properties"] = properties
        schemas[schema] = object
    }

    /// With unknown keys refused, nothing but the listed keys; with unknown keys kept, anything but a credential.
    private static func closeOrGuard(_ schema: inout [String: Any], accounts: AccountConfiguration) {
        switch accounts.unknownKeys {
        case .reject: schema["additionalProperties"] = false
        case .keep: schema["propertyNames"] = ["not": ["enum": credentialKeys.sorted()]]
        }
    }

    private static func merging(_ schema: Any?, rules: [ValidationRule]) -> [String: Any] {
        var schema = schema as? [String: Any] ?? ["type": "string"]
        let patterns = rules.map { ["pattern": anchored($0.pattern)] }
        if !patterns.isEmpty { schema["allOf"] = patterns }
        return schema
    }

    /// A rule matches the whole value, with `.` matching line breaks (`CompiledPattern`); a JSON Schema pattern
    /// matches anywhere, so it is anchored, and `(?s)` gives `.` the same meaning. The end is `(?![\s\S])`, not `$`,
    /// which also matches before a final line break. A leading inline flag group of the rule's is merged into the
    /// one that must come first.
    static func anchored(_ pattern: String) -> String {
        var flags: Set<Character> = ["s"]
        var body = Substring(pattern)
        if body.hasPrefix("(?"), let close = body.firstIndex(of: ")"),
           body[body.index(body.startIndex, offsetBy: 2)..<close].allSatisfy({ "imsx".contains($0) }) {
            flags.formUnion(body[body.index(body.startIndex, offsetBy: 2)..<close])
            body = body[body.index(after: close)...]
        }
        return "(?\(String(flags.sorted())))^(?:\(body))(?![\\s\\S])"
    }

    /// The JSON Schema of one key's values, with its rules.
    private static func valueSchema(_ descriptor: AccountKeyDescriptor, accounts: AccountConfiguration) -> [String: Any] {
        let rules = accounts.rules(for: descriptor.identifier).map { ["pattern": anchored($0.pattern)] }
        var schema: [String: Any]
        switch descriptor.valueType {
        case .string:
            schema = ["type": "string"]
            if !rules.isEmpty { schema["allOf"] = rules }
        case .bool:
            schema = ["type": "boolean"]
        case .integer:
            schema = ["type": "integer", "minimum": Int64.min, "maximum": Int64.max]
        case .double:
            schema = ["type": "number"]
        case .date:
            schema = ["type": "string", "format": "date", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"]
        case .enumeration(let cases):
            schema = ["type": "string", "enum": cases]
        case .stringList:
            var items: [String: Any] = ["type": "string"]
            if !rules.isEmpty { items["allOf"] = rules }
            schema = ["type": "array", "items": items]
        case .personName:
            schema = [
                "type": "object",
                "additionalProperties": false,
                "properties": Dictionary(uniqueKeysWithValues: PersonName.componentNames.map { ($0, ["type": ["string", "null"]]) }),
            ]
        }
        schema["title"] = descriptor.name
        return schema
    }
}

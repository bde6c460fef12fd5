import Foundation

extension AccountConfiguration {
    /// Builds the configuration a deployment key schema file describes, or refuses it naming every problem
    /// with its key, e.g. `accounts.yaml: key "biography": unknown type "strng" (expected one of …)`.
    ///
    /// - Parameter source: the file name, used as the prefix of each message.
    public init(schemaFile file: AccountSchemaFile, source: String) throws(AccountConfigurationError) {
        var builder = SchemaFileBuilder()
        builder.read(file)
        var problems = builder.problems
        do {
            let schema = try AccountKeySchema(customKeys: builder.customKeys)
            self = try AccountConfiguration(
                userIdType: builder.userIdType,
                keys: builder.configuredKeys,
                schema: schema,
                supportedKeys: builder.supportedKeys,
                unknownKeys: builder.unknownKeys
            )
        } catch {
            // Keys already refused above were left out; problems that only follow from that are noise.
            problems += error.problems.filter { problem in problem.key.map { !builder.refusedIdentifiers.contains($0) } ?? true }
            self = .default
        }
        guard problems.isEmpty else {
            throw AccountConfigurationError(source: source, problems: problems)
        }
    }

    /// Parses and builds a JSON schema file.
    public init(json: Data, source: String) throws(AccountConfigurationError) {
        let file: AccountSchemaFile
        do {
            file = try JSONDecoder().decode(AccountSchemaFile.self, from: json)
        } catch let error as DecodingError {
            throw AccountConfigurationError(source: source, problems: [.init(key: nil, Self.describe(error))])
        } catch {
            throw AccountConfigurationError(source: source, problems: [.init(key: nil, "not a valid JSON document: \(error)")])
        }
        try self.init(schemaFile: file, source: source)
    }

    /// A decoding error as a problem message with the path it happened at (e.g. `at keys[1].rules: …`).
    public static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.reduce(into: "") { path, key in
                if let index = key.intValue {
                    path += "[\(index)]"
                } else {
                    path += path.isEmpty ? key.stringValue : "." + key.stringValue
                }
            }
        }
        func place(_ codingPath: [any CodingKey]) -> String {
            codingPath.isEmpty ? "at the top level" : "at \(path(codingPath))"
        }
        switch error {
        case let .typeMismatch(_, context):
            return "\(place(context.codingPath)): \(context.debugDescription)"
        case let .valueNotFound(type, context):
            return "\(place(context.codingPath)): missing \(type)"
        case let .keyNotFound(key, context):
            return "\(place(context.codingPath + [key])): missing field"
        case let .dataCorrupted(context):
            // The parser's own error carries the line and column, which is what a person fixing the file needs.
            let detail = context.underlyingError.map { "\(context.debugDescription) (\($0))" } ?? context.debugDescription
            return context.codingPath.isEmpty ? "malformed document: \(detail)" : "\(place(context.codingPath)): \(detail)"
        @unknown default:
            return "malformed document: \(error)"
        }
    }
}

import Foundation
import KontoModel
import Logging
import Yams

/// Reads the deployment key schema file at start and builds the ``KontoModel/AccountConfiguration``.
///
/// YAML (`.yaml`, `.yml`) or JSON (`.json`), chosen by extension, go through the same checks; a bad file is
/// refused with every problem named by file and key, so a service can print it and exit.
public struct AccountConfigurationLoader: Sendable {
    /// The file formats the loader reads.
    public enum Format: String, Sendable, CaseIterable {
        case yaml
        case json

        /// The format a path's extension names, if any.
        public init?(path: String) {
            switch URL(fileURLWithPath: path).pathExtension.lowercased() {
            case "yaml", "yml": self = .yaml
            case "json": self = .json
            default: return nil
            }
        }
    }

    private let logger: Logger

    public init(logger: Logger = Logger(label: "konto.configuration")) {
        self.logger = logger
    }

    /// Loads the file at `path`; problems are reported with the file's name.
    public func load(path: String) throws(AccountConfigurationError) -> AccountConfiguration {
        let source = URL(fileURLWithPath: path).lastPathComponent
        guard let format = Format(path: path) else {
            throw AccountConfigurationError(source: source, problems: [
                .init(key: nil, "unsupported file type (expected .yaml, .yml or .json)"),
            ])
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw AccountConfigurationError(source: source, problems: [.init(key: nil, "cannot read file at \(path)")])
        }
        let configuration = try load(data: data, format: format, source: source)
        logger.info("Loaded account configuration", metadata: [
            "file": "\(path)",
            "keys": "\(configuration.keys.map(\.identifier).joined(separator: ","))",
            "userIdType": "\(configuration.userIdType.rawValue)",
        ])
        return configuration
    }

    /// Builds a configuration from a file's contents; `source` prefixes every problem.
    public func load(data: Data, format: Format, source: String) throws(AccountConfigurationError) -> AccountConfiguration {
        switch format {
        case .json:
            return try AccountConfiguration(json: data, source: source)
        case .yaml:
            return try AccountConfiguration(schemaFile: try decodeYAML(data, source: source), source: source)
        }
    }

    private func decodeYAML(_ data: Data, source: String) throws(AccountConfigurationError) -> AccountSchemaFile {
        func refuse(_ message: String) -> AccountConfigurationError {
            AccountConfigurationError(source: source, problems: [.init(key: nil, message)])
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw refuse("not UTF-8 text")
        }
        // An empty document decodes as nothing at all; say so rather than report a type mismatch.
        let content = text.split(whereSeparator: \.isNewline).filter { line in
            let trimmed = line.drop { $0.isWhitespace }
            return !trimmed.isEmpty && !trimmed.hasPrefix("#")
        }
        guard !content.isEmpty else {
            throw refuse("the file is empty")
        }
        do {
            return try YAMLDecoder().decode(AccountSchemaFile.self, from: text)
        } catch let error as DecodingError {
            throw refuse(AccountConfiguration.describe(error))
        } catch {
            throw refuse("malformed YAML: \(error)")
        }
    }
}

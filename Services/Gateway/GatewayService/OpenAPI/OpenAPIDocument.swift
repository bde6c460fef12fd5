import Foundation
import Yams

/// The OpenAPI document the gateway serves at `/openapi.json`: openapi.yaml (the source the server interface is
/// generated from) as JSON, converted once.
enum OpenAPIDocument {
    /// openapi.yaml itself, embedded by SwiftPM (`.embedInCode`).
    static let yaml = String(decoding: PackageResources.openapi_yaml, as: UTF8.self)

    /// The document as JSON, keys sorted.
    static let json: Data = {
        do {
            guard let object = try Yams.load(yaml: yaml) else { throw CocoaError(.fileReadCorruptFile) }
            return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        } catch {
            // openapi.yaml is checked by the build (the generator parses it) and by the tests.
            preconditionFailure("openapi.yaml does not convert to JSON: \(error)")
        }
    }()

    /// The document's paths (all literal: the API has no path parameters) and their methods, upper case.
    static let methods: [String: [String]] = {
        guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any], let paths = object["paths"] as? [String: Any] else { return [:] }
        let verbs: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
        return paths.mapValues { item in ((item as? [String: Any])?.keys.filter(verbs.contains).map { $0.uppercased() } ?? []).sorted() }
    }()

    static var paths: Set<String> { Set(methods.keys) }
}

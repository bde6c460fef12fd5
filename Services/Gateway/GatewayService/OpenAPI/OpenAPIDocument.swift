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

    /// The document's paths (templates such as `/v1/account/factors/{factorId}`) and their methods, upper case.
    static let methods: [String: [String]] = {
        guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any], let paths = object["paths"] as? [String: Any] else { return [:] }
        let verbs: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
        return paths.mapValues { item in ((item as? [String: Any])?.keys.filter(verbs.contains).map { $0.uppercased() } ?? []).sorted() }
    }()

    static var paths: Set<String> { Set(methods.keys) }

    /// The document's path a request path is an instance of: itself when literal, else the template whose `{…}`
    /// segments each stand for one non-empty segment; nil when none.
    static func template(matching path: String) -> String? {
        if methods[path] != nil { return path }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        return templates.first { template in
            template.count == segments.count && zip(template, segments).allSatisfy { pattern, segment in
                pattern.hasPrefix("{") ? !segment.isEmpty : pattern == segment
            }
        }.map { $0.joined(separator: "/") }
    }

    /// The paths with parameters, split into segments.
    private static let templates: [[Substring]] = methods.keys.filter { $0.contains("{") }.sorted().map {
        $0.split(separator: "/", omittingEmptySubsequences: false)
    }
}

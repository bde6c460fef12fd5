import Foundation
import Yams

/// The OpenAPI document the gateway serves at `/openapi.json`: openapi.yaml (the source the server interface is
/// generated from) as JSON, converted once.
enum OpenAPIDocument {
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
}

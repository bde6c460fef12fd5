import Foundation

extension ContractExample {
    /// How a consumer's failure to read this example's recorded `part` (request, response) is reported: the example
    /// and the JSON path of what its type could not read, e.g.
    /// `identity/12-change-password (identity.changePassword): response $.sessionsEnded: missing, and the consumer's type needs it`.
    public func consumerFailure(reading part: String, _ error: any Error) -> String {
        "\(label): \(part) \(Self.describe(error))"
    }

    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ codingPath: [any CodingKey]) -> String {
            "$" + codingPath.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }.joined()
        }
        switch error {
        case let .keyNotFound(key, context):
            return "\(path(context.codingPath + [key])): missing, and the consumer's type needs it"
        case let .typeMismatch(type, context):
            return "\(path(context.codingPath)): the consumer's type expects \(type), found something else"
        case let .valueNotFound(type, context):
            return "\(path(context.codingPath)): the consumer's type expects \(type), found null"
        case let .dataCorrupted(context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}

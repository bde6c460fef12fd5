import Foundation
import HTTPTypes
import KontoModel

/// The JSON body of a problem response: `{type, title, status, detail, code, errors, requestId}`.
struct ProblemDocument: Encodable {
    var type: String
    var title: String
    var status: Int
    var detail: String?
    var code: String
    var errors: [AccountFieldError]?
    var requestId: String?

    init(_ problem: GatewayProblem, requestID: String?) {
        // A stable URI per code; relative, so it needs no host of ours.
        self.type = "/problems/\(problem.code)"
        self.title = problem.title
        self.status = problem.status.code
        self.detail = problem.detail
        self.code = problem.code.rawValue
        self.errors = problem.fields.isEmpty ? nil : problem.fields
        self.requestId = requestID
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    func encoded() -> Data {
        (try? Self.encoder.encode(self)) ?? Data(#"{"code":"gateway.internalError","status":500,"title":"Internal Server Error","type":"/problems/gateway.internalError"}"#.utf8)
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import KontoErrors
import Logging
import OpenAPIRuntime

/// Turns every failure inside it into an answer: the handlers' ``GatewayProblem``s, the generated code's decoding and
/// content-type errors (400, 415), the router's 404 and 405. Under the web console's path the answer is a page for
/// people; elsewhere `application/problem+json` (``GatewayProblem``'s own rendering, as an `HTTPResponseError`).
/// Nothing unexpected leaks: any other error is a logged 500 with a constant message.
struct ProblemMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    /// Refusals under this path (the web console's) are pages for people, not problem documents.
    var htmlPages: (prefix: String, render: @Sendable (GatewayProblem) -> Response)?
    /// The document's paths this listener serves (the public listener: all but the admin API's; the admin listener:
    /// those alone). Another listener's path is not found here, not a method refused.
    var servesPath: @Sendable (String) -> Bool = { !OpenAPIDocument.isAdminPath($0) }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let problem = Self.problem(for: error, path: request.uri.path, servesPath: servesPath, logger: RequestScope.scope.logger)
            if let htmlPages, request.uri.path == htmlPages.prefix || request.uri.path.hasPrefix(htmlPages.prefix + "/") {
                var response = htmlPages.render(problem)
                response.headers.append(contentsOf: problem.headers)
                if let retryAfter = problem.retryAfter { response.headers[.retryAfter] = String(retryAfter) }
                return response
            }
            return problem.response(requestID: RequestScope.current?.requestID)
        }
    }

    /// The problem an error stands for; `path` tells the router's 404 for a path that exists with other methods (405).
    static func problem(
        for error: any Error, path: String? = nil, servesPath: @Sendable (String) -> Bool = { !OpenAPIDocument.isAdminPath($0) }, logger: Logger
    ) -> GatewayProblem {
        switch error {
        case let problem as GatewayProblem:
            return problem
        case let error as ServerError:
            if let problem = error.underlyingError as? GatewayProblem {
                return problem
            }
            switch error.httpStatus {
            case .unsupportedMediaType:
                return GatewayProblem(status: .unsupportedMediaType, code: .requestUnsupportedMediaType, detail: "The body must be application/json.")
            case .badRequest:
                return .malformed(Self.describe(error.underlyingError, cause: error.causeDescription))
            default:
                logger.error("request failed", metadata: ["konto.operation": "\(error.operationID)", "konto.error": "\(String(describing: type(of: error.underlyingError)))"])
                return GatewayProblem(status: .internalServerError, code: .gatewayInternalError, detail: "The request failed.")
            }
        case let error as HTTPError:
            switch error.status {
            case .notFound:
                if let path, let template = OpenAPIDocument.template(matching: path), servesPath(template), let allowed = OpenAPIDocument.methods[template] {
                    // The path exists, the method does not.
                    return GatewayProblem(
                        status: .methodNotAllowed,
                        code: .requestMethodNotAllowed,
                        detail: "The route takes \(allowed.joined(separator: ", ")).",
                        headers: [.allow: allowed.joined(separator: ", ")]
                    )
                }
                return GatewayProblem(status: .notFound, code: .requestNotFound, detail: "No such route.")
            case .methodNotAllowed:
                return GatewayProblem(status: .methodNotAllowed, code: .requestMethodNotAllowed, detail: "The route does not take this method.", headers: error.headers)
            case .contentTooLarge:
                return GatewayProblem(status: .contentTooLarge, code: .requestBodyTooLarge, detail: "The body is too large.")
            default:
                return GatewayProblem(status: error.status, code: error.status.kind == .clientError ? .requestMalformed : .gatewayInternalError)
            }
        default:
            logger.error("request failed", metadata: ["konto.error": "\(String(describing: type(of: error)))"])
            return GatewayProblem(status: .internalServerError, code: .gatewayInternalError, detail: "The request failed.")
        }
    }

    /// What was wrong with a body the generated code could not decode, naming the field, never echoing values.
    static func describe(_ error: any Error, cause: String) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            let joined = codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return joined.isEmpty ? "the body" : "'" + joined.dropFirst(joined.hasPrefix(".") ? 1 : 0) + "'"
        }
        switch error {
        case DecodingError.typeMismatch(let type, let context):
            return "\(path(context.codingPath)) must be \(Self.typeName(type))."
        case DecodingError.valueNotFound(let type, let context):
            return "\(path(context.codingPath)) must be \(Self.typeName(type)), not null."
        case DecodingError.keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])) is required."
        case DecodingError.dataCorrupted(let context) where context.debugDescription.hasPrefix("Additional properties are disabled"):
            // OpenAPIRuntime's refusal of a field the schema does not have (`additionalProperties: false`): a typo.
            return "\(path(context.codingPath)) is not a field of this body (misspelt?)."
        case DecodingError.dataCorrupted(let context):
            return context.codingPath.isEmpty ? "The body is not valid JSON." : "\(path(context.codingPath)) is not valid: \(context.debugDescription)"
        default:
            return cause
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type, is Int32.Type: "an integer"
        case is Double.Type: "a number"
        case is Bool.Type: "a boolean"
        case is [Any].Type: "an array"
        default: "an object"
        }
    }
}

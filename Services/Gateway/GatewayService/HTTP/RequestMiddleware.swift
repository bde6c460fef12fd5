import Foundation
import HTTPTypes
import KontoErrors
import Hummingbird
import Logging
import NIOCore
import OpenAPIRuntime

/// Runs around every route: gives the request its id (from `X-Request-ID` or generated) and trace context, reads
/// the body up to the limit before anything decodes it (413 beyond), sets the ``RequestScope`` the handlers see, and
/// renders every failure as `application/problem+json`: the handlers' ``GatewayProblem``s, the generated code's
/// decoding and content-type errors (400, 415), the router's 404 and 405. Nothing unexpected leaks: any other
/// error is a logged 500 with a constant message.
struct RequestMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    static let requestIDHeader = HTTPField.Name("X-Request-ID")!
    static let traceParentHeader = HTTPField.Name("traceparent")!

    let maximumBodyBytes: Int
    /// The header that carries the client's address when a trusted proxy sits in front; nil to use the peer address.
    let clientAddressHeader: HTTPField.Name?
    /// Whose forwarding headers are believed (``TrustedProxies``).
    let trustedProxies: TrustedProxies
    let rateLimits: GatewayRateLimits
    let metrics: GatewayMetrics
    let logger: Logger
    /// Refusals under this path (the web console's) are pages for people, not problem documents.
    var htmlPages: (prefix: String, render: @Sendable (GatewayProblem) -> Response)?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let requestID = RequestScope.acceptedRequestID(request.headers[Self.requestIDHeader]) ?? UUID().uuidString.lowercased()
        let peer = context.remoteAddress?.ipAddress
        var scope = RequestScope(
            requestID: requestID,
            traceParent: RequestScope.acceptedTraceParent(request.headers[Self.traceParentHeader]),
            clientAddress: clientAddressHeader.map { trustedProxies.clientAddress(peer: peer, forwarded: request.headers[$0]) }
                ?? peer.map(TrustedProxies.throttlingKey),
            bearerToken: RequestScope.bearerToken(fromAuthorization: request.headers[.authorization]),
            logger: logger
        )
        scope.viaTrustedProxy = trustedProxies.trusts(peer)

        var response: Response
        do {
            if case .limited(let retryAfter) = rateLimits.check(path: request.uri.path, address: scope.clientAddress) {
                throw GatewayRateLimits.refusal(retryAfter: retryAfter)
            }
            var request = request
            if let length = request.headers[.contentLength].flatMap(Int.init), length > maximumBodyBytes {
                throw GatewayProblem.bodyTooLarge(maximumBodyBytes)
            }
            if request.method != .get, request.method != .head {
                do {
                    _ = try await request.collectBody(upTo: maximumBodyBytes)
                } catch let error as HTTPError where error.status == .contentTooLarge {
                    throw GatewayProblem.bodyTooLarge(maximumBodyBytes)
                }
            }
            let bounded = request
            response = try await RequestScope.$current.withValue(scope) {
                try await next(bounded, context)
            }
        } catch let error as HTTPError where error.status == .notFound && OpenAPIDocument.methods[request.uri.path] != nil {
            // The path exists, the method does not.
            let allowed = OpenAPIDocument.methods[request.uri.path] ?? []
            response = Self.render(
                GatewayProblem(
                    status: .methodNotAllowed,
                    code: KontoErrorCode.requestMethodNotAllowed,
                    detail: "The route takes \(allowed.joined(separator: ", ")).",
                    headers: [.allow: allowed.joined(separator: ", ")]
                ),
                requestID: requestID
            )
        } catch {
            let problem = Self.problem(for: error, logger: scope.logger)
            if let htmlPages, request.uri.path == htmlPages.prefix || request.uri.path.hasPrefix(htmlPages.prefix + "/") {
                response = htmlPages.render(problem)
                response.headers.append(contentsOf: problem.headers)
                if let retryAfter = problem.retryAfter { response.headers[.retryAfter] = String(retryAfter) }
            } else {
                response = Self.render(problem, requestID: requestID)
            }
        }
        response.headers[Self.requestIDHeader] = requestID
        // The OpenAPI runtime percent-encodes header values, so the generated handlers' `ETag: "7"` leaves as
        // `%227%22`; HTTP's entity tag is the quoted form (the runtime decodes an If-Match either way).
        if let etag = response.headers[.eTag], etag.contains("%"), let decoded = etag.removingPercentEncoding {
            response.headers[.eTag] = decoded
        }
        metrics.request(path: request.uri.path, method: request.method.rawValue, status: response.status.code, duration: .now - start)
        return response
    }

    /// The problem an error stands for.
    static func problem(for error: any Error, logger: Logger) -> GatewayProblem {
        switch error {
        case let problem as GatewayProblem:
            return problem
        case let error as ServerError:
            if let problem = error.underlyingError as? GatewayProblem {
                return problem
            }
            switch error.httpStatus {
            case .unsupportedMediaType:
                return GatewayProblem(status: .unsupportedMediaType, code: KontoErrorCode.requestUnsupportedMediaType, detail: "The body must be application/json.")
            case .badRequest:
                return .malformed(Self.describe(error.underlyingError, cause: error.causeDescription))
            default:
                logger.error("request failed", metadata: ["konto.operation": "\(error.operationID)", "konto.error": "\(String(describing: type(of: error.underlyingError)))"])
                return GatewayProblem(status: .internalServerError, code: KontoErrorCode.gatewayInternalError, detail: "The request failed.")
            }
        case let error as HTTPError:
            switch error.status {
            case .notFound:
                return GatewayProblem(status: .notFound, code: KontoErrorCode.requestNotFound, detail: "No such route.")
            case .methodNotAllowed:
                return GatewayProblem(status: .methodNotAllowed, code: KontoErrorCode.requestMethodNotAllowed, detail: "The route does not take this method.", headers: error.headers)
            case .contentTooLarge:
                return GatewayProblem(status: .contentTooLarge, code: KontoErrorCode.requestBodyTooLarge, detail: "The body is too large.")
            default:
                return GatewayProblem(status: error.status, code: error.status.kind == .clientError ? KontoErrorCode.requestMalformed : KontoErrorCode.gatewayInternalError)
            }
        default:
            logger.error("request failed", metadata: ["konto.error": "\(String(describing: type(of: error)))"])
            return GatewayProblem(status: .internalServerError, code: KontoErrorCode.gatewayInternalError, detail: "The request failed.")
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

    static func render(_ problem: GatewayProblem, requestID: String?) -> Response {
        var headers = problem.headers
        headers[.contentType] = "application/problem+json"
        if let retryAfter = problem.retryAfter {
            headers[.retryAfter] = String(retryAfter)
        }
        return Response(
            status: problem.status,
            headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: ProblemDocument(problem, requestID: requestID).encoded()))
        )
    }
}

extension GatewayProblem {
    static func bodyTooLarge(_ limit: Int) -> GatewayProblem {
        GatewayProblem(status: .contentTooLarge, code: .requestBodyTooLarge, detail: "The body is larger than \(limit) bytes.")
    }
}

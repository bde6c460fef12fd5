import Hummingbird
import KontoErrors

/// Reads the body up to the limit before anything decodes it: a declared or actual body over it is a 413, so no
/// handler (generated or the console's) ever buffers more.
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    let maximumBodyBytes: Int
    /// A larger limit for newline-delimited JSON (the admin listener's account import), if any.
    var maximumNDJSONBytes: Int?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var maximumBodyBytes = maximumBodyBytes
        if let maximumNDJSONBytes, request.headers[.contentType]?.lowercased().hasPrefix("application/x-ndjson") == true {
            maximumBodyBytes = maximumNDJSONBytes
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maximumBodyBytes {
            throw GatewayProblem.bodyTooLarge(maximumBodyBytes)
        }
        guard request.method != .get, request.method != .head else {
            return try await next(request, context)
        }
        var request = request
        do {
            _ = try await request.collectBody(upTo: maximumBodyBytes)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw GatewayProblem.bodyTooLarge(maximumBodyBytes)
        }
        return try await next(request, context)
    }
}

extension GatewayProblem {
    static func bodyTooLarge(_ limit: Int) -> GatewayProblem {
        GatewayProblem(status: .contentTooLarge, code: .requestBodyTooLarge, detail: "The body is larger than \(limit) bytes.")
    }
}

import HTTPTypes
import Hummingbird
import NIOCore

/// A problem is Hummingbird's kind of error that knows its own answer: `application/problem+json` with its status,
/// its headers and `Retry-After`. ``ProblemMiddleware`` renders through it (with the request's id); should a problem
/// ever escape the middleware, Hummingbird renders it the same way.
extension GatewayProblem: HTTPResponseError {
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        response(requestID: RequestScope.current?.requestID)
    }

    func response(requestID: String?) -> Response {
        var headers = self.headers
        headers[.contentType] = "application/problem+json"
        // RFC 9110 15.5.2: a 401 carries a challenge; a problem with none of its own (a refused operator key) gets
        // the bearer scheme every Konto credential uses.
        if status == .unauthorized, headers[.wwwAuthenticate] == nil {
            headers[.wwwAuthenticate] = "Bearer"
        }
        if let retryAfter {
            headers[.retryAfter] = String(retryAfter)
        }
        return Response(
            status: status,
            headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: ProblemDocument(self, requestID: requestID).encoded()))
        )
    }
}

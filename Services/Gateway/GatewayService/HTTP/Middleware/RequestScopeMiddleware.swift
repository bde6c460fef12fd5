import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Gives the request its ``RequestScope`` (its id, from `X-Request-ID` or generated, its trace context, the client's
/// address, the bearer token) for everything inside, and names the id in the answer.
struct RequestScopeMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    static let requestIDHeader = HTTPField.Name("X-Request-ID")!
    static let traceParentHeader = HTTPField.Name("traceparent")!

    /// The header that carries the client's address when a trusted proxy sits in front; nil to use the peer address.
    let clientAddressHeader: HTTPField.Name?
    /// Whose forwarding headers are believed (``TrustedProxies``).
    let trustedProxies: TrustedProxies
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
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
        scope.clientName = RequestScope.clientName(fromUserAgent: request.headers[.userAgent])
        scope.ifMatch = request.headers[.ifMatch]
        var response = try await RequestScope.$current.withValue(scope) {
            try await next(request, context)
        }
        response.headers[Self.requestIDHeader] = requestID
        return response
    }
}

import Hummingbird
import KontoContracts

/// Checks the operator key of an admin API request before anything else of the request is read: its body and query
/// are decoded only for a valid key, so a caller without one learns nothing of what a request must look like (issue
/// 69, 15: the generated handlers decode first). Identity answers (`identity.operatorAuthorize` as a gate: a refusal
/// is audited and counted against the address like any other, a success is left to the call that follows); the
/// handler's own call checks the key and its scope again, so a key revoked in between is still refused.
///
/// It costs an admin request one more wire call and a primary-key read in Identity; the admin API is an operator's,
/// not a hot path.
struct OperatorKeyMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    let upstreams: GatewayUpstreams

    /// The admin API's paths but its document, which anyone on the admin listener may read.
    static func guards(_ path: String) -> Bool {
        path.hasPrefix("/admin/v1/") && path != "/admin/v1/openapi.json"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard Self.guards(path) else { return try await next(request, context) }
        // The method and path say what was tried; never the query (it may hold a searched address).
        let action = String("\(request.method.rawValue) \(path)".prefix(IdentityOperatorAuthorizeRequest.maximumActionLength))
        _ = try await upstreams.identity(
            IdentityContract.operatorAuthorize, IdentityOperatorAuthorizeRequest(operatorCall: GatewayAPI.operatorCall(), scope: nil, action: action, gate: true)
        )
        return try await next(request, context)
    }
}

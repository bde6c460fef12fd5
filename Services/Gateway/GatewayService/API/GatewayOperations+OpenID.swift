import Foundation
import KontoContracts
import KontoModel

extension GatewayOperations {
    /// The authorization endpoint's decision for the console (Identity's ``IdentityContract/openIDAuthorize``): the
    /// request's query as it came, the browser's console session, when the request first arrived, and the owner's
    /// answer on the consent page if there was one.
    package func openIDAuthorize(
        session: String?, query: OAuthForm, requestedAt: Date, consentGiven: Bool = false, consentDenied: Bool = false
    ) async throws -> IdentityOpenIDAuthorization {
        try await api.upstreams.identity(IdentityContract.openIDAuthorize, IdentityOpenIDAuthorizeRequest(
            token: session.map(BearerToken.init), parameters: query.pairs.map { IdentityOpenIDParameter($0.name, $0.value) },
            requestedAt: Timestamp(requestedAt), consentGiven: consentGiven, consentDenied: consentDenied ? true : nil,
            clientAddress: RequestScope.scope.clientAddress
        ))
    }
}

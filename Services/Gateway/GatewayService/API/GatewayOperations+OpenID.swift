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

    /// RP-initiated logout's decision for the console (Identity's ``IdentityContract/openIDLogout``): the request's
    /// parameters as they came, the browser's console session, and whether the person confirmed on the console's page.
    package func openIDLogout(session: String?, query: OAuthForm?, confirmed: Bool) async throws -> IdentityOpenIDLogout {
        try await api.upstreams.identity(IdentityContract.openIDLogout, IdentityOpenIDLogoutRequest(
            token: session.map(BearerToken.init), parameters: (query?.pairs ?? []).map { IdentityOpenIDParameter($0.name, $0.value) }, confirmed: confirmed,
            clientAddress: RequestScope.scope.clientAddress
        ))
    }
}

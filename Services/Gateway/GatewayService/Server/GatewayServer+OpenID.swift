import Foundation
import HTTPTypes
import Hummingbird
import KontoContracts
import KontoErrors
import NIOCore

/// Konto as an OpenID Provider (docs/OIDC.md): the endpoints relying parties call, answered from Identity, which
/// holds the keys and issues the tokens. Not part of the JSON API's document: OAuth's endpoints have their own
/// formats (form bodies, `{"error": …}` answers).
extension GatewayServer {
    static func registerOpenID(on router: Router<GatewayRequestContext>, api: GatewayAPI) {
        // The JWK Set: every published key's public half, the signing one first. Relying parties cache it; a key
        // being rotated in is published before it signs, so five minutes of caching lose nothing.
        router.get("/oauth2/jwks") { _, _ in
            let keys = try await api.upstreams.identity(IdentityContract.openIDKeys, IdentityOpenIDKeysRequest())
            guard keys.issuer != nil else {
                throw GatewayProblem(status: .notFound, code: .requestNotFound, detail: "Konto is no OpenID Provider here (KONTO_IDENTITY_OIDC_ISSUER is not set).")
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let body = try encoder.encode(["keys": keys.keys])
            return Response(
                status: .ok,
                headers: [.contentType: "application/jwk-set+json", .cacheControl: "public, max-age=300"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: body))
            )
        }
    }
}

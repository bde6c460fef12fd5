import Crypto
import Foundation
import IdentityService
import KontoContracts
import NIOHTTP1
import Testing

/// Konto as an OpenID Provider, at the gateway: what relying parties fetch.
@Suite("Gateway: the OpenID Provider's endpoints")
struct GatewayOpenIDTests {
    @Test("/oauth2/jwks: 404 while Konto is no OpenID Provider; then the JWK Set, every key's public half, cacheable")
    func jwks() async throws {
        try await GatewayHarness.withGateway { gateway in
            let off = try await gateway.request(.GET, "/oauth2/jwks")
            #expect(off.status == 404 && off.code == "request.notFound")
        }
        let signing = try OpenIDSigningKey(pem: P256.Signing.PrivateKey().pemRepresentation)
        let next = try OpenIDSigningKey(pem: P256.Signing.PrivateKey().pemRepresentation)
        var options = IdentityOptions()
        options.openID = try OpenIDProviderSettings(issuer: "http://localhost:8080", keys: OpenIDSigningKeys([signing, next]))
        try await GatewayHarness.withGateway(identityOptions: options) { gateway in
            let answer = try await gateway.request(.GET, "/oauth2/jwks")
            #expect(answer.status == 200)
            #expect(answer.contentType == "application/jwk-set+json")
            #expect(answer.headers.first(name: "Cache-Control") == "public, max-age=300")
            let keys = try #require(answer.object["keys"] as? [[String: Any]])
            #expect(keys.map { $0["kid"] as? String } == [signing.keyId, next.keyId])
            #expect(keys.allSatisfy { $0["kty"] as? String == "EC" && $0["crv"] as? String == "P-256" && $0["alg"] as? String == "ES256" && $0["use"] as? String == "sig" })
            #expect(keys.allSatisfy { $0["d"] == nil })
            #expect(keys.first?["x"] as? String == signing.publicKey.x)
        }
    }
}

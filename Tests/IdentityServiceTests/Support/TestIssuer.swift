import Crypto
import Foundation
@testable import IdentityService
import Synchronization

/// An OpenID Connect issuer in the test's process, for the verifier's and the store's unit tests: it serves its
/// discovery document and keys through ``ProviderFetcher`` (no network), signs ID tokens (ES256, built here with
/// swift-crypto alone, not with the library Konto verifies with), answers the token endpoint for the codes it
/// issued, and records revocations (failing the first ones when told to). The real providers over HTTP are in
/// the end-to-end tests.
final class TestIssuer: ProviderFetcher {
    let issuer: String
    struct State {
        var keys: [(kid: String, key: P256.Signing.PrivateKey)] = []
        var fetches: [String: Int] = [:]
        /// code → the token endpoint's answer (JSON).
        var codes: [String: [String: String]] = [:]
        var revocations: [[String: String]] = []
        var failRevocations = 0
        var failedRevocations = 0
        var tokenRequests: [[String: String]] = []
        var down = false
        /// Discovery fields replaced (e.g. `jwks_uri` on another host).
        var discovery: [String: String] = [:]
    }
    let state: Mutex<State>

    init(issuer: String = "https://issuer.test") {
        self.issuer = issuer
        state = Mutex(State(keys: [("key-1", P256.Signing.PrivateKey())]))
    }

    var currentKid: String { state.withLock { $0.keys.last!.kid } }

    /// A new key, published beside (or instead of) the old ones.
    @discardableResult
    func rotate(keepingOld: Bool = false) -> String {
        state.withLock { state in
            let kid = "key-\(state.keys.count + 1)-\(UUID().uuidString.prefix(6))"
            if !keepingOld { state.keys.removeAll() }
            state.keys.append((kid, P256.Signing.PrivateKey()))
            return kid
        }
    }

    func fetches(_ suffix: String) -> Int {
        state.withLock { $0.fetches.filter { $0.key.hasSuffix(suffix) }.values.reduce(0, +) }
    }

    /// Standard claims for `sub`, with the nonce as given (already hashed for Apple's native flow, if wanted).
    func claims(sub: String = "user-1", aud: Any = "konto-web", nonce: String? = "n-0123456789abcdef", email: String? = "leland@stanford.edu", emailVerified: Any? = true, now: Date = Date()) -> [String: Any] {
        var claims: [String: Any] = ["iss": issuer, "sub": sub, "aud": aud, "iat": Int(now.timeIntervalSince1970), "exp": Int(now.timeIntervalSince1970) + 600]
        if let nonce { claims["nonce"] = nonce }
        if let email { claims["email"] = email }
        if let emailVerified { claims["email_verified"] = emailVerified }
        return claims
    }

    /// An ES256 token signed with the current key (or `key`), header as given.
    func token(_ claims: [String: Any], header: [String: Any]? = nil, key: P256.Signing.PrivateKey? = nil) -> String {
        let (kid, current) = state.withLock { $0.keys.last! }
        let header = header ?? ["alg": "ES256", "kid": kid, "typ": "JWT"]
        let input = Self.part(header) + "." + Self.part(claims)
        let signature = try! (key ?? current).signature(for: Array(input.utf8))
        return input + "." + Self.base64url(Array(signature.rawRepresentation))
    }

    /// An ES256 token over claims given as JSON text as they are (e.g. with a name twice, which no dictionary holds).
    func token(rawClaims json: String) -> String {
        let (kid, current) = state.withLock { $0.keys.last! }
        let input = Self.part(["alg": "ES256", "kid": kid, "typ": "JWT"]) + "." + Self.base64url(Array(json.utf8))
        let signature = try! current.signature(for: Array(input.utf8))
        return input + "." + Self.base64url(Array(signature.rawRepresentation))
    }

    /// Remembers what the token endpoint answers for `code`.
    func issue(code: String, idToken: String, refreshToken: String? = nil) {
        state.withLock { state in
            var answer = ["id_token": idToken, "access_token": "at-\(code)", "token_type": "Bearer"]
            if let refreshToken { answer["refresh_token"] = refreshToken }
            state.codes[code] = answer
        }
    }

    static func part(_ object: [String: Any]) -> String {
        base64url(Array(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])))
    }

    static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    var jwks: [String: Any] {
        state.withLock { state in
            ["keys": state.keys.map { kid, key -> [String: Any] in
                let raw = Array(key.publicKey.rawRepresentation)
                return ["kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig", "x": Self.base64url(Array(raw[0..<32])), "y": Self.base64url(Array(raw[32..<64]))]
            }]
        }
    }

    // MARK: ProviderFetcher

    func get(_ url: String, limit: Int) async throws(ProviderFetchError) -> [UInt8] {
        let (down, overrides) = state.withLock { state in
            state.fetches[url, default: 0] += 1
            return (state.down, state.discovery)
        }
        if down { throw ProviderFetchError("down") }
        let object: [String: Any]
        switch url {
        case issuer + "/.well-known/openid-configuration":
            var document: [String: Any] = [
                "issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": issuer + "/token",
                "jwks_uri": issuer + "/jwks", "revocation_endpoint": issuer + "/revoke",
                "id_token_signing_alg_values_supported": ["ES256", "RS256"],
            ]
            for (key, value) in overrides { document[key] = value }
            object = document
        case _ where url.hasSuffix("/jwks"):
            object = jwks
        default:
            throw ProviderFetchError("404")
        }
        return Array(try! JSONSerialization.data(withJSONObject: object))
    }

    func post(_ url: String, form: [(String, String)], limit: Int) async throws(ProviderFetchError) -> (status: Int, body: [UInt8]) {
        let fields = Dictionary(form, uniquingKeysWith: { $1 })
        return state.withLock { state -> (Int, [UInt8]) in
            switch url {
            case issuer + "/token":
                state.tokenRequests.append(fields)
                guard let code = fields["code"], let answer = state.codes.removeValue(forKey: code) else {
                    return (400, Array(#"{"error":"invalid_grant"}"#.utf8))
                }
                return (200, Array(try! JSONSerialization.data(withJSONObject: answer)))
            case issuer + "/revoke":
                if state.failRevocations > 0 {
                    state.failRevocations -= 1
                    state.failedRevocations += 1
                    return (500, [])
                }
                state.revocations.append(fields)
                return (200, [])
            default:
                return (404, [])
            }
        }
    }
}

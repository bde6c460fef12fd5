@testable import IdentityService
import Testing

/// The authorization request's checks: what a hostile or careless client may send, and what Konto does with it.
@Suite("OpenID Provider: authorization requests")
struct OpenIDAuthorizationRequestTests {
    static let clients = OpenIDClients([
        OpenIDClient(
            id: "study-app", name: "Spezi Study", authentication: .none,
            redirectURIs: ["org.example.study:/oauth2/callback", "http://127.0.0.1:8000/callback"], scopes: ["openid", "profile", "email", "offline_access"]
        ),
        OpenIDClient(id: "dashboard", name: "Dashboard", authentication: .secret(method: "client_secret_basic", digest: []), redirectURIs: ["https://dashboard.example.org/cb"], scopes: ["openid", "email"]),
    ])
    /// The base64url SHA-256 of RFC 7636 appendix B's verifier.
    static let challenge = "E9Melhoa2OwvFrEMTJguCQaoWr4Q5ZaLnA1SnCfGoOI"

    static var good: [(String, String)] {
        [
            ("response_type", "code"), ("client_id", "study-app"), ("redirect_uri", "org.example.study:/oauth2/callback"),
            ("scope", "openid email profile"), ("state", "af0ifjsldkj"), ("nonce", "n-0S6_WzA2Mj"),
            ("code_challenge", challenge), ("code_challenge_method", "S256"),
        ]
    }

    static func with(_ changes: [String: String?], base: [(String, String)] = good) -> [(String, String)] {
        var parameters = base.filter { changes[$0.0] == nil }
        for (name, value) in changes { if let value { parameters.append((name, value)) } }
        return parameters
    }

    static func refusal(_ parameters: [(String, String)]) -> OpenIDAuthorizationRequest.Refusal? {
        do {
            _ = try OpenIDAuthorizationRequest.check(parameters, clients: clients)
            return nil
        } catch {
            return error
        }
    }

    /// The `error` a refusal sends back to the client, nil when it is shown on a page instead.
    static func redirectedError(_ parameters: [(String, String)]) -> String? {
        if case .redirect(let error, _, let uri, let state)? = refusal(parameters) {
            #expect(uri == (parameters.first { $0.0 == "redirect_uri" }?.1) && state == (parameters.first { $0.0 == "state" }?.1))
            return error
        }
        return nil
    }

    @Test("a good request: its client, the redirect URI, the scopes sorted, state, nonce, the challenge; prompt, max_age and acr_values read")
    func accepted() throws {
        let request = try OpenIDAuthorizationRequest.check(Self.good, clients: Self.clients)
        #expect(request.client.id == "study-app" && request.redirectURI == "org.example.study:/oauth2/callback")
        #expect(request.scopes == ["email", "openid", "profile"] && request.state == "af0ifjsldkj" && request.nonce == "n-0S6_WzA2Mj")
        #expect(request.codeChallenge == Self.challenge && request.prompts.isEmpty && request.maxAge == nil && request.requiredAssuranceLevel == nil)
        let asking = try OpenIDAuthorizationRequest.check(Self.with(["prompt": "login consent", "max_age": "300", "acr_values": "urn:other aal2 aal1"]), clients: Self.clients)
        #expect(asking.prompts == [.login, .consent] && asking.maxAge == 300 && asking.requiredAssuranceLevel == 2)
        // A loopback redirect URI with the port the app picked (RFC 8252 7.3); its path and scheme still exact.
        let loopback = try OpenIDAuthorizationRequest.check(Self.with(["redirect_uri": "http://127.0.0.1:51004/callback"]), clients: Self.clients)
        #expect(loopback.redirectURI == "http://127.0.0.1:51004/callback")
    }

    @Test("never redirected: an unknown or missing client, a redirect URI one character off, another client's, a loopback one on another path")
    func notRedirectable() {
        for parameters in [
            Self.with(["client_id": "stranger"]), Self.with(["client_id": nil]), Self.with(["redirect_uri": nil]),
            Self.with(["redirect_uri": "org.example.study:/oauth2/callbacks"]), Self.with(["redirect_uri": "org.example.study:/oauth2/Callback"]),
            Self.with(["redirect_uri": "https://dashboard.example.org/cb"]), Self.with(["redirect_uri": "http://127.0.0.1:51004/callback/../x"]),
            Self.with(["redirect_uri": "http://localhost:8000/callback"]), Self.with(["redirect_uri": "http://127.0.0.1:8000/callback?x=1"]),
        ] {
            guard case .notRedirectable? = Self.refusal(parameters) else {
                Issue.record("redirected or accepted: \(parameters)")
                continue
            }
        }
        #expect(Self.refusal(Self.good + (0..<40).map { ("x\($0)", "y") }) == .notRedirectable("The request is too large."))
    }

    @Test("sent back to the client: no or plain PKCE, another response type, request objects, scopes, prompts, max_age, a parameter twice")
    func redirected() {
        #expect(Self.redirectedError(Self.with(["code_challenge": nil])) == "invalid_request")
        #expect(Self.redirectedError(Self.with(["code_challenge_method": "plain"])) == "invalid_request")
        #expect(Self.redirectedError(Self.with(["code_challenge_method": nil])) == "invalid_request")
        #expect(Self.redirectedError(Self.with(["code_challenge": "short"])) == "invalid_request")
        #expect(Self.redirectedError(Self.with(["response_type": "token"])) == "unsupported_response_type")
        #expect(Self.redirectedError(Self.with(["response_type": "code id_token"])) == "unsupported_response_type")
        #expect(Self.redirectedError(Self.with(["response_mode": "fragment"])) == "invalid_request")
        #expect(Self.redirectedError(Self.with(["request": "eyJ..."])) == "request_not_supported")
        #expect(Self.redirectedError(Self.with(["request_uri": "https://evil.example/r"])) == "request_uri_not_supported")
        #expect(Self.redirectedError(Self.with(["scope": "email"])) == "invalid_scope")
        #expect(Self.redirectedError(Self.with(["scope": "openid admin"])) == "invalid_scope")
        #expect(Self.redirectedError(Self.with(["client_id": "dashboard", "redirect_uri": "https://dashboard.example.org/cb", "scope": "openid offline_access"])) == "invalid_scope")
        #expect(Self.redirectedError(Self.with(["prompt": "none login"])) == "invalid_request")
        #expect(Self.redirectedError(Self.with(["prompt": "select_account"])) == "invalid_request")
        #expect(Self.redirectedError(Self.with(["max_age": "-1"])) == "invalid_request")
        #expect(Self.redirectedError(Self.with(["max_age": "1e3"])) == "invalid_request")
        #expect(Self.redirectedError(Self.with(["nonce": "a\u{0}b"])) == "invalid_request")
        #expect(Self.redirectedError(Self.good + [("scope", "openid")]) == "invalid_request")
    }
}

import Foundation

/// An authorization request (RFC 6749 4.1.1, OpenID Connect Core 3.1.2.1) checked against the registered clients with
/// OAuth 2.1's and the Security BCP's (RFC 9700) rules: the code flow only, PKCE with S256 from every client, the
/// redirect URI matched exactly, no request objects.
///
/// Until the client and its redirect URI are known good, a refusal is shown to the person (``Refusal/notRedirectable``):
/// sending it to an unchecked URI would make Konto an open redirector. After that, refusals go back to the client
/// (``Refusal/redirect``), as RFC 6749 4.1.2.1 says.
public struct OpenIDAuthorizationRequest: Sendable, Equatable {
    public enum Prompt: String, Sendable, CaseIterable {
        case none, login, consent
    }

    public enum Refusal: Error, Sendable, Equatable {
        /// Shown on a page, never redirected: an unknown client, a redirect URI it did not register, a request that
        /// cannot be read.
        case notRedirectable(String)
        /// Sent to the client's redirect URI as `error` and `error_description`, with its `state`.
        case redirect(error: String, description: String, redirectURI: String, state: String?)
    }

    public var client: OpenIDClient
    /// As given: equal to a registered one (for a loopback one, but for its port).
    public var redirectURI: String
    /// Asked for and allowed to the client, sorted; `openid` among them.
    public var scopes: [String]
    public var state: String?
    public var nonce: String?
    /// The PKCE challenge (S256): the token request's verifier must hash to it.
    public var codeChallenge: String
    public var prompts: Set<Prompt>
    /// How old (in seconds) a sign-in may be; older asks again.
    public var maxAge: Int?
    /// The assurance level `acr_values` asks for (1 a password or code, 2 a second factor or passkey); nil: any.
    public var requiredAssuranceLevel: Int?

    /// The ACR values Konto knows, with the session assurance level each stands for.
    public static let assuranceLevels = ["aal1": 1, "aal2": 2]
    /// The longest parameter value read, and the most parameters.
    public static let maximumValueLength = 2_048
    public static let maximumParameters = 32
    /// The longest nonce: what the storage keeps with a code (`identity.oidc_codes.nonce`).
    public static let maximumNonceLength = 512

    /// Checks the query's parameters (`name=value` pairs, in order; a name twice is refused, RFC 6749 3.1).
    public static func check(_ parameters: [(String, String)], clients: OpenIDClients) throws(Refusal) -> OpenIDAuthorizationRequest {
        guard parameters.count <= maximumParameters, parameters.allSatisfy({ $0.1.utf8.count <= maximumValueLength && $0.0.utf8.count <= 64 }) else {
            throw .notRedirectable("The request is too large.")
        }
        var values: [String: String] = [:]
        var repeated: String?
        for (name, value) in parameters where values.updateValue(value, forKey: name) != nil {
            repeated = repeated ?? name
        }
        guard let clientId = values["client_id"], !clientId.isEmpty, let client = clients[clientId] else {
            throw .notRedirectable("This application is not known to Konto (client_id).")
        }
        guard let redirectURI = values["redirect_uri"], client.redirectURIs.contains(where: { matches(redirectURI, registered: $0) }) else {
            throw .notRedirectable("This application's redirect_uri is not one it registered.")
        }
        let state = values["state"]
        func refuse(_ error: String, _ description: String) -> Refusal {
            .redirect(error: error, description: description, redirectURI: redirectURI, state: state)
        }
        if let repeated { throw refuse("invalid_request", "\(repeated) is given more than once.") }
        if values["request"] != nil { throw refuse("request_not_supported", "Request objects are not supported.") }
        if values["request_uri"] != nil { throw refuse("request_uri_not_supported", "request_uri is not supported.") }
        guard values["response_type"] == "code" else {
            throw refuse("unsupported_response_type", "Only the authorization code flow (response_type=code) is offered.")
        }
        if let mode = values["response_mode"], mode != "query" {
            throw refuse("invalid_request", "Only response_mode=query is offered.")
        }
        // PKCE with S256 from every client, confidential ones too (OAuth 2.1 4.1.1; plain proves nothing a thief lacks).
        guard let challenge = values["code_challenge"], isCodeChallenge(challenge) else {
            throw refuse("invalid_request", "code_challenge is required: PKCE with S256 (the base64url SHA-256 of the verifier, 43 characters of A-Z a-z 0-9 - _).")
        }
        guard values["code_challenge_method"] == "S256" else {
            throw refuse("invalid_request", "code_challenge_method must be S256.")
        }
        let asked = Set((values["scope"] ?? "").split(separator: " ").map(String.init))
        guard asked.contains("openid") else { throw refuse("invalid_scope", "The scope must include openid.") }
        let denied = asked.subtracting(client.scopes)
        guard denied.isEmpty else { throw refuse("invalid_scope", "Not allowed to this application: \(denied.sorted().joined(separator: " ")).") }
        var prompts: Set<Prompt> = []
        for word in (values["prompt"] ?? "").split(separator: " ") {
            guard let prompt = Prompt(rawValue: String(word)) else { throw refuse("invalid_request", "prompt may be none, login or consent.") }
            prompts.insert(prompt)
        }
        if prompts.contains(.none), prompts.count > 1 { throw refuse("invalid_request", "prompt=none cannot be combined with another prompt.") }
        var maxAge: Int?
        if let text = values["max_age"] {
            guard text.utf8.count <= 9, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let seconds = Int(text) else {
                throw refuse("invalid_request", "max_age must be a whole number of seconds.")
            }
            maxAge = seconds
        }
        // Voluntary (OpenID Connect Core 5.5.1.1): the first known value counts, unknown ones are passed over.
        let level = (values["acr_values"] ?? "").split(separator: " ").lazy.compactMap { assuranceLevels[String($0)] }.first
        for (name, value) in [("state", state), ("nonce", values["nonce"])] {
            if let value, value.isEmpty || value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                throw refuse("invalid_request", "\(name) must be visible text.")
            }
        }
        // The nonce is kept with the code (the state is not): one bound, the storage's (in characters, as PostgreSQL
        // counts them), checked here.
        if let nonce = values["nonce"], nonce.unicodeScalars.count > maximumNonceLength {
            throw refuse("invalid_request", "nonce has at most \(maximumNonceLength) characters.")
        }
        return OpenIDAuthorizationRequest(
            client: client, redirectURI: redirectURI, scopes: asked.sorted(), state: state, nonce: values["nonce"], codeChallenge: challenge,
            prompts: prompts, maxAge: maxAge, requiredAssuranceLevel: level
        )
    }

    /// Exact, character for character; a loopback one (RFC 8252 7.3) but for its port, which a native app picks.
    static func matches(_ given: String, registered: String) -> Bool {
        if given == registered { return true }
        guard let left = URLComponents(string: given), let right = URLComponents(string: registered), left.scheme == "http", right.scheme == "http",
              let host = left.host, ["127.0.0.1", "[::1]", "::1"].contains(host), host == right.host
        else { return false }
        var portless = left
        portless.port = right.port
        return portless.string == registered
    }

    /// S256's challenge (RFC 7636 4.2): the unpadded base64url of a SHA-256, 43 characters of its alphabet (the only
    /// method offered, so the 43 to 128 a `plain` challenge may have cannot occur; the storage keeps exactly 43).
    static func isCodeChallenge(_ text: String) -> Bool {
        text.utf8.count == 43 && text.utf8.allSatisfy { byte in
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F
        }
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import KontoContracts
import KontoErrors
import KontoModel
import NIOCore

/// Konto as an OpenID Provider (docs/OIDC.md): the endpoints relying parties call, answered from Identity, which
/// holds the keys, the codes and the grants. Not part of the JSON API's document: OAuth's endpoints have their own
/// formats (form bodies, `{"error": …}` answers). The authorization endpoint is the console's (it signs people in).
extension GatewayServer {
    /// The longest OAuth form read (a private_key_jwt assertion is the largest field, at most 8 KiB).
    static let maximumOAuthFormBytes = 16 * 1_024

    static func registerOpenID(on router: Router<GatewayRequestContext>, api: GatewayAPI, rateLimits: GatewayRateLimits, consolePath: String?) {
        // The authorization endpoint is the console's: its cookies (the session) are scoped to its path.
        router.get("/oauth2/authorize") { request, _ in
            try toConsole(consolePath, "/authorize", query: request.uri.query, endpoint: "authorization")
        }
        // OpenID Connect Core 3.1.2.1: the endpoint MUST take a form POST too; it comes along as the query of the
        // browser's next GET.
        router.post("/oauth2/authorize") { request, _ in
            try toConsole(consolePath, "/authorize", query: try await formAsQuery(request, consolePath: consolePath), endpoint: "authorization")
        }

        // RP-initiated logout is the console's too (it ends the console's session); a form POST (RP-Initiated Logout
        // 1.0, 2) comes along as the query of the browser's next GET.
        router.get("/oauth2/logout") { request, _ in
            try toConsole(consolePath, "/end-session", query: request.uri.query, endpoint: "logout")
        }
        router.post("/oauth2/logout") { request, _ in
            try toConsole(consolePath, "/end-session", query: try await formAsQuery(request, consolePath: consolePath), endpoint: "logout")
        }

        // The JWK Set: every published key's public half, the signing one first. Relying parties cache it; a key
        // being rotated in is published before it signs, so five minutes of caching lose nothing.
        router.get("/oauth2/jwks") { _, _ in
            let keys = try await providerKeys(api)
            return json(["keys": keys.keys], headers: [.contentType: "application/jwk-set+json", .cacheControl: "public, max-age=300"])
        }

        router.get("/.well-known/openid-configuration") { _, _ in
            let keys = try await providerKeys(api)
            return json(OpenIDDiscovery(issuer: keys.issuer ?? "", keys: keys.keys), headers: [.cacheControl: "public, max-age=300"])
        }

        router.post("/oauth2/token") { request, _ in
            try await clientRequest(request, rateLimits: rateLimits) { form, client in
                let answer = try await api.upstreams.identity(IdentityContract.openIDToken, IdentityOpenIDTokenRequest(
                    client: client, grantType: form["grant_type"], code: form["code"].map(SecretString.init), redirectURI: form["redirect_uri"],
                    codeVerifier: form["code_verifier"].map(SecretString.init), refreshToken: form["refresh_token"].map(SecretString.init),
                    scope: form["scope"], duplicated: form.duplicated, clientAddress: RequestScope.scope.clientAddress
                ))
                if let error = answer.error { return (nil, error) }
                guard let tokens = answer.tokens else { return (nil, IdentityOpenIDError("server_error", "No tokens.", status: 500)) }
                return (json(OAuthTokenResponse(tokens), headers: noStore), nil)
            }
        }

        router.post("/oauth2/revoke") { request, _ in
            try await clientRequest(request, rateLimits: rateLimits) { form, client in
                let answer = try await api.upstreams.identity(IdentityContract.openIDRevoke, IdentityOpenIDTokenQuery(
                    client: client, token: form["token"].map(SecretString.init), tokenTypeHint: form["token_type_hint"], clientAddress: RequestScope.scope.clientAddress
                ))
                if let error = answer.error { return (nil, error) }
                return (Response(status: .ok, headers: noStore), nil)
            }
        }

        router.post("/oauth2/introspect") { request, _ in
            try await clientRequest(request, rateLimits: rateLimits) { form, client in
                let answer = try await api.upstreams.identity(IdentityContract.openIDIntrospect, IdentityOpenIDTokenQuery(
                    client: client, token: form["token"].map(SecretString.init), tokenTypeHint: form["token_type_hint"]
                ))
                if let error = answer.error { return (nil, error) }
                return (json(OAuthIntrospection(answer), headers: noStore), nil)
            }
        }

        let answerUserInfo: @Sendable (Request, GatewayRequestContext) async throws -> Response = { request, _ in
            try await userInfo(request, api: api)
        }
        router.get("/oauth2/userinfo", use: answerUserInfo)
        router.post("/oauth2/userinfo", use: answerUserInfo)
    }

    /// The browser sent on to the console's `path` with `query`; 404 where the console is off.
    static func toConsole(_ consolePath: String?, _ path: String, query: String?, endpoint: String) throws -> Response {
        guard let consolePath else {
            throw GatewayProblem(status: .notFound, code: .requestNotFound, detail: "The \(endpoint) endpoint needs the web console, which is off here.")
        }
        return Response(status: .seeOther, headers: [.location: consolePath + path + (query.map { "?" + $0 } ?? ""), .cacheControl: "no-store"])
    }

    /// A browser's form POST to an endpoint of the console's, as the query its GET would carry (nil for an empty
    /// form): bounded, read only as a form, refused as one when it cannot be read. Without a console: nothing is read.
    static func formAsQuery(_ request: Request, consolePath: String?) async throws -> String? {
        guard consolePath != nil else { return nil }
        guard isForm(request) else {
            throw GatewayProblem(status: .unsupportedMediaType, code: .requestUnsupportedMediaType, detail: "The body must be application/x-www-form-urlencoded.")
        }
        guard let buffer = try? await request.body.collect(upTo: maximumOAuthFormBytes) else {
            throw GatewayProblem(status: .contentTooLarge, code: .requestBodyTooLarge, detail: "The form is too large.")
        }
        let body = String(buffer: buffer)
        guard body.isEmpty || OAuthForm(body) != nil else {
            throw GatewayProblem(status: .badRequest, code: .requestMalformed, detail: "The form cannot be read.")
        }
        return body.isEmpty ? nil : body
    }

    /// Whether the body is declared a form (`application/x-www-form-urlencoded`), as OAuth's endpoints take.
    static func isForm(_ request: Request) -> Bool {
        request.headers[.contentType].map { $0.lowercased().hasPrefix("application/x-www-form-urlencoded") } == true
    }

    static let noStore: HTTPFields = [.cacheControl: "no-store", HTTPField.Name("Pragma")!: "no-cache"]

    /// Identity's issuer and keys; 404 where Konto is no OpenID Provider.
    static func providerKeys(_ api: GatewayAPI) async throws -> IdentityOpenIDKeys {
        let keys = try await api.upstreams.identity(IdentityContract.openIDKeys, IdentityOpenIDKeysRequest())
        guard keys.issuer != nil else {
            throw GatewayProblem(status: .notFound, code: .requestNotFound, detail: "Konto is no OpenID Provider here (KONTO_IDENTITY_OIDC_ISSUER is not set).")
        }
        return keys
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var fields = headers
        if fields[.contentType] == nil { fields[.contentType] = "application/json" }
        let body = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// RFC 6749 5.2's error answer; a failed client authentication is 401 with the scheme to use (`Basic`).
    static func oauthError(_ error: IdentityOpenIDError) -> Response {
        var headers = noStore
        if error.status == 401 { headers[.wwwAuthenticate] = "Basic realm=\"konto\"" }
        return json(["error": error.error, "error_description": error.description], status: HTTPResponse.Status(code: error.status), headers: headers)
    }

    /// A request from a client to the token, revocation or introspection endpoint: a bounded form body, the client's
    /// credentials (Basic or the form's), and throttling of failed client authentications per address: a
    /// confidential client's secret is a password, guessed at the credential rate at most.
    static func clientRequest(
        _ request: Request, rateLimits: GatewayRateLimits,
        _ handle: (OAuthForm, IdentityOpenIDClientCredentials) async throws -> (Response?, IdentityOpenIDError?)
    ) async throws -> Response {
        let address = RequestScope.scope.clientAddress
        if case .limited(let retryAfter) = rateLimits.peekCredentials(address: address) {
            throw GatewayRateLimits.refusal(retryAfter: retryAfter)
        }
        guard isForm(request) else {
            return oauthError(IdentityOpenIDError("invalid_request", "The body must be application/x-www-form-urlencoded."))
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maximumOAuthFormBytes)
        } catch {
            return oauthError(IdentityOpenIDError("invalid_request", "The form is too large.", status: 413))
        }
        guard let form = OAuthForm(String(buffer: buffer)) else {
            return oauthError(IdentityOpenIDError("invalid_request", "The form cannot be read."))
        }
        let authorization = request.headers[.authorization]
        let basic = OAuthForm.basicCredentials(authorization)
        if authorization != nil, basic == nil {
            rateLimits.noteFailedCredentials(address: address)
            return oauthError(IdentityOpenIDError("invalid_client", "Client authentication failed.", status: 401))
        }
        let credentials = IdentityOpenIDClientCredentials(
            basicId: basic?.id, basicSecret: basic.map { SecretString($0.secret) }, clientId: form["client_id"],
            clientSecret: form["client_secret"].map(SecretString.init), assertionType: form["client_assertion_type"],
            assertion: form["client_assertion"].map(SecretString.init)
        )
        let (response, error) = try await handle(form, credentials)
        if let error {
            if error.error == "invalid_client" { rateLimits.noteFailedCredentials(address: address) }
            return oauthError(error)
        }
        return response ?? oauthError(IdentityOpenIDError("server_error", "No answer.", status: 500))
    }

    /// OpenID Connect Core 5.3: the claims the access token's scopes allow, as its client knows the account (`sub`).
    /// RFC 6750's errors in `WWW-Authenticate`.
    static func userInfo(_ request: Request, api: GatewayAPI) async throws -> Response {
        guard let authorization = request.headers[.authorization], authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else {
            return Response(status: .unauthorized, headers: [.wwwAuthenticate: "Bearer realm=\"konto\"", .cacheControl: "no-store"])
        }
        let token = String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        let grant = try await api.upstreams.identity(IdentityContract.openIDAccessToken, IdentityOpenIDAccessTokenRequest(token: BearerToken(token)))
        guard grant.error == nil, let accountId = grant.accountId, let scopes = grant.scopes else {
            let error = grant.error ?? IdentityOpenIDError("invalid_token", "The access token is invalid or expired.", status: 401)
            let description = error.description.replacingOccurrences(of: "\"", with: "'")
            return Response(
                status: HTTPResponse.Status(code: error.status),
                headers: [.wwwAuthenticate: "Bearer realm=\"konto\", error=\"\(error.error)\", error_description=\"\(description)\"", .cacheControl: "no-store"]
            )
        }
        guard scopes.contains("openid") else {
            return Response(status: .forbidden, headers: [.wwwAuthenticate: "Bearer realm=\"konto\", error=\"insufficient_scope\", scope=\"openid\"", .cacheControl: "no-store"])
        }
        var profile: AccountDetails?
        if scopes.contains("profile") {
            let record: ProfileRecord?
            do {
                record = try await api.upstreams.profile(ProfileContract.load, ProfileLoadRequest(accountId: accountId))
            } catch {
                // No details stored (an account made before Profile had them): no profile claims.
                guard error.code == AccountError.Code.notFound else { throw error }
                record = nil
            }
            profile = record?.details
        }
        return json(OpenIDUserInfo(grant: grant, profile: profile), headers: noStore)
    }
}

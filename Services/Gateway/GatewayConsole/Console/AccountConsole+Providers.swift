import Crypto
import Foundation
import GatewayService
import HTTPTypes
import Hummingbird
import KontoContracts
import KontoModel

/// "Continue with …": the authorization code flow with PKCE, `state` and `nonce` (RFC 9700's advice for browser
/// clients), its callback at `{base}/oidc/{provider}/callback`, and the sign-up form for what the provider did not give.
///
/// The flow's secrets (state, nonce, PKCE verifier) wait in an HttpOnly cookie of their own for ten minutes, MACed
/// with the console's key: the callback is accepted only in the browser that started it, for the provider it started
/// with. Apple posts its callback (`form_post`): a cross-site POST carries only `SameSite=None` cookies, which must be
/// `Secure`, so over HTTPS the cookie is `None`; over plain HTTP (development) it is `Lax`, which a provider's redirect
/// (a GET) carries.
extension AccountConsole {
    static let providerCookie = "konto_oidc"
    static let providerFlowSeconds = 600

    func registerProviders(on router: Router<GatewayRequestContext>) {
        let base = options.basePath
        router.get(RouterPath(base + "/oidc/:provider")) { request, context in
            await self.startProviderFlow(request, provider: context.parameters.get("provider") ?? "", link: false)
        }
        router.get(RouterPath(base + "/oidc/:provider/callback")) { request, context in
            var parameters: [String: String] = [:]
            for (name, value) in request.uri.queryParameters { parameters[String(name)] = String(value) }
            return await self.providerCallback(request, provider: context.parameters.get("provider") ?? "", parameters: parameters)
        }
        router.post(RouterPath(base + "/oidc/:provider/callback")) { request, context in
            let body = (try? await request.body.collect(upTo: self.options.maximumBodyBytes)).map { String(buffer: $0) } ?? ""
            let form = ConsoleForm.decode(body)
            var parameters: [String: String] = [:]
            for name in ["code", "state", "error", "user"] { parameters[name] = form[name] }
            return await self.providerCallback(request, provider: context.parameters.get("provider") ?? "", parameters: parameters)
        }
        router.post(RouterPath(base + "/oidc/complete")) { request, _ in await self.form(request, credentials: true, self.completeProviderSignUp) }
    }

    /// What the flow keeps between the start and the callback.
    struct ProviderFlow: Codable {
        var provider: String
        var state: String
        var nonce: String
        var verifier: String
        var expiresAt: Int
        /// The flow links the identity to the signed-in account (the identities page) instead of signing in.
        var link: Bool?
    }

    func redirectURI(_ provider: String) -> String? {
        options.publicURL.map { $0 + options.basePath + "/oidc/\(provider)/callback" }
    }

    /// To the provider's authorization page, the flow's secrets in their cookie: a sign-in, or (`link`) a link to the
    /// signed-in account.
    func startProviderFlow(_ request: Request, provider: String, link: Bool) async -> Response {
        await startProviderFlow(visit(request), provider: provider, link: link)
    }

    func startProviderFlow(_ visit: Visit, provider: String, link: Bool) async -> Response {
        guard let redirectURI = redirectURI(provider), provider.utf8.count <= 32,
              provider.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" })
        else { return redirect(link ? "/identities" : "/", visit: visit) }
        let flow = ProviderFlow(
            provider: provider, state: Self.randomToken(), nonce: Self.randomToken(), verifier: Self.randomToken() + Self.randomToken(),
            expiresAt: Int(Date().timeIntervalSince1970) + Self.providerFlowSeconds, link: link ? true : nil
        )
        let challenge = Self.base64URL(Array(SHA256.hash(data: Array(flow.verifier.utf8))))
        let url: String
        do {
            url = try await operations.asSession(nil) {
                try await operations.authorizationURL(provider: provider, redirectURI: redirectURI, state: flow.state, nonce: flow.nonce, codeChallenge: challenge)
            }
        } catch {
            return problemPage(consoleProblem(error), visit: visit)
        }
        var response: Response
        if link {
            // The start of a link is a form (it needs the CSRF token: a cross-site request must not link a provider's
            // session to the account), and the pages' CSP allows forms to go to this site only, redirects included: the
            // browser is sent on by the page itself.
            response = page("continue", title: "Link an identity", visit: visit) { page in
                page.refreshURL = url
                page.continueLabel = "Continue to the provider"
            }
        } else {
            var headers = Self.securityHeaders
            headers[.location] = url
            response = Response(status: .seeOther, headers: headers)
            if visit.isNewCSRFCookie {
                response.setCookie(cookie(Self.csrfCookie, visit.csrfCookie, visit: visit, sameSite: .strict))
            }
        }
        response.setCookie(cookie(Self.providerCookie, sealFlow(flow), visit: visit, sameSite: visit.secure ? .none : .lax, maxAge: Self.providerFlowSeconds))
        return response
    }

    private func providerCallback(_ request: Request, provider: String, parameters: [String: String]) async -> Response {
        let visit = visit(request)
        guard let flow = request.cookies[Self.providerCookie].flatMap({ openFlow($0.value) }), flow.provider == provider,
              flow.expiresAt > Int(Date().timeIntervalSince1970),
              let state = parameters["state"], ConstantTime.equal(Array(state.utf8), Array(flow.state.utf8)),
              let redirectURI = redirectURI(provider)
        else {
            return page("problem", title: "Please try again", visit: visit, status: .forbidden) { page in
                page.formError = "This sign-in has expired or did not start in this browser. Go back and try again."
            }
        }
        if flow.link == true {
            return await linkCallback(visit, flow: flow, code: parameters["error"] == nil ? parameters["code"] : nil, redirectURI: redirectURI)
        }
        var response: Response
        if parameters["error"] != nil || parameters["code"] == nil {
            response = await setupPage(visit, userId: "", error: "The sign-in with the provider was cancelled or refused.", notice: nil, status: .unauthorized)
        } else {
            response = await providerSignedIn(visit, provider: provider) { device in
                try await operations.asSession(nil, device: device) {
                    try await operations.logIn(
                        provider: provider, code: parameters["code"] ?? "", codeVerifier: flow.verifier, redirectURI: redirectURI, nonce: flow.nonce,
                        name: parameters["user"].flatMap(Self.appleName)
                    )
                }
            } refused: { problem in
                await self.setupPage(visit, userId: "", error: problem.detail ?? problem.title, notice: nil, status: problem.status)
            }
        }
        response.setCookie(cookie(Self.providerCookie, "", visit: visit, sameSite: visit.secure ? .none : .lax, maxAge: 0))
        return response
    }

    private func completeProviderSignUp(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        let token = form["signUpToken"] ?? ""
        let provider = form["provider"] ?? ""
        var (values, errors) = schema.values(from: form, keys: externalSignUpKeys)
        let userId = values.removeValue(forKey: UserIdKey.identifier).map(ConsoleField.text) ?? ""
        if userId.isEmpty { errors[UserIdKey.identifier] = Self.required }
        var shown = values
        shown[UserIdKey.identifier] = .string(userId)
        guard errors.isEmpty else { return externalSignUpPage(visit, token: token, provider: provider, values: shown, errors: errors, status: .unprocessableContent) }
        return await providerSignedIn(visit, provider: provider) { device in
            try await operations.asSession(nil, device: device) {
                try await operations.completeSignUp(provider: provider, token: token, userId: userId, details: AccountDetails(values: values))
            }
        } refused: { problem in
            var errors = Self.fieldErrors(problem)
            if problem.code == AccountError.Code.credentialsTaken { errors[UserIdKey.identifier] = problem.detail ?? problem.title }
            if problem.code == AccountError.Code.invalidIdentityToken {
                return await self.setupPage(visit, userId: "", error: problem.detail ?? problem.title, notice: nil, status: problem.status)
            }
            return self.externalSignUpPage(visit, token: token, provider: provider, values: shown, errors: errors, formError: errors.isEmpty ? problem.detail : nil, status: problem.status)
        }
    }

    /// A provider's answer as a page: signed in (the session, or the second factor's page), or the sign-up form.
    private func providerSignedIn(
        _ visit: Visit,
        provider: String,
        _ call: (String) async throws -> GatewayOperations.ProviderSignIn,
        refused: (GatewayProblem) async -> Response
    ) async -> Response {
        let device = visit.device ?? Self.randomToken()
        do {
            switch try await call(device) {
            case .signedIn(let answer):
                return signedIn(answer, visit: visit, device: device)
            case .signUp(let token, let missing, let offered):
                var errors: [String: String] = [:]
                for field in missing where errors[field.key] == nil { errors[field.key] = field.message }
                return externalSignUpPage(visit, token: token, provider: provider, values: offered.storedValues, errors: errors, formError: "A few more details and your account is ready.")
            }
        } catch {
            let problem = consoleProblem(error)
            guard problem.status.code < 500 else { return problemPage(problem, visit: visit) }
            return await refused(problem)
        }
    }

    /// The sign-up form's keys without the password (the provider stands for it).
    private var externalSignUpKeys: [(AccountKeyDescriptor, AccountKeyRequirement)] {
        schema.signUpKeys.filter { $0.0.identifier != PasswordKey.identifier }
    }

    private func externalSignUpPage(
        _ visit: Visit, token: String, provider: String, values: [String: AccountValue], errors: [String: String], formError: String? = nil, status: HTTPResponse.Status = .ok
    ) -> Response {
        page("externalSignup", title: "Complete your sign-up", visit: visit, status: status) { page in
            page.formError = formError ?? (errors.isEmpty ? nil : "Some values need your attention.")
            page.externalSignUp = .init(token: token, provider: provider)
            page.categories = schema.categories(externalSignUpKeys, values: values, errors: errors)
        }
    }

    /// Apple's `user` parameter (first authorization only): `{"name": {"firstName", "lastName"}, "email"}`.
    static func appleName(_ json: String) -> PersonName? {
        struct User: Decodable {
            struct Name: Decodable { var firstName: String?; var lastName: String? }
            var name: Name?
        }
        guard json.utf8.count <= 4_096, let user = try? JSONDecoder().decode(User.self, from: Data(json.utf8)), let name = user.name else { return nil }
        return PersonName(givenName: name.firstName.map { String($0.prefix(100)) }, familyName: name.lastName.map { String($0.prefix(100)) })
    }

    private func sealFlow(_ flow: ProviderFlow) -> String {
        signedCookieValue(flow, purpose: "oidc")
    }

    func openFlow(_ value: String) -> ProviderFlow? {
        openSignedCookieValue(value, as: ProviderFlow.self, purpose: "oidc", limit: 2_048)
    }
}

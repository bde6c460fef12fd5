import Foundation
import GatewayService
import HTTPTypes
import Hummingbird
import KontoContracts

/// Konto as an OpenID Provider, in the browser (docs/OIDC.md): the authorization endpoint signs people in with the
/// console's own sign-in (password, second factor, passkey, mailed code, providers) and asks a third party's consent.
/// The request waits in a signed cookie while the person signs in; every sign-in that makes a session comes back to it.
extension AccountConsole {
    static let authorizationCookie = "konto_authorize"
    static let authorizationFlowSeconds = 15 * 60
    /// The longest authorization request kept (a cookie holds about 4 KiB; real requests are a few hundred bytes).
    static let maximumAuthorizationQueryBytes = 3_072
    /// The longest logout request read: an RS256 `id_token_hint` is about 1.3 KiB.
    static let maximumLogoutQueryBytes = 6_144

    /// An authorization request waiting for a sign-in or a consent: its query as it came and when it first came
    /// (`prompt=login` needs a sign-in after that).
    struct AuthorizationFlow: Codable {
        var query: String
        var requestedAt: Double
        var expiresAt: Int
        /// The session a sign-in again (prompt=login, max_age, a second factor) is to replace, by id: it ends only
        /// once the new sign-in has succeeded, so a page that merely sends a browser here ends no session.
        var replacing: String?
    }

    /// What people read on the consent page for each scope.
    static let scopeDescriptions = [
        "openid": "Sign you in with your Konto account",
        "email": "See your email address",
        "profile": "See your name, date of birth and gender",
        "offline_access": "Stay signed in when you are not using it",
    ]

    func registerOpenID(on router: Router<GatewayRequestContext>) {
        let base = options.basePath
        router.get(RouterPath(base + "/authorize")) { request, _ in await self.authorize(request) }
        router.get(RouterPath(base + "/authorize/resume")) { request, _ in await self.resumeAuthorization(request) }
        // The sign-in an application asked for again, shown while the current session lasts.
        router.get(RouterPath(base + "/sign-in-again")) { request, _ in
            let visit = self.visit(request)
            guard visit.awaitsAuthorization else { return self.redirect("/", visit: visit) }
            return await self.setupPage(visit, userId: "", error: nil, notice: Self.notices["signInAgain"])
        }
        router.post(RouterPath(base + "/authorize/consent")) { request, _ in
            let flow = request.cookies[Self.authorizationCookie].flatMap { self.openAuthorization($0.value) }
            return await self.form(request) { visit, form in await self.consent(visit, form: form, flow: flow) }
        }
        router.get(RouterPath(base + "/end-session")) { request, _ in
            let visit = self.visit(request)
            let query = request.uri.query ?? ""
            guard Self.readableLogoutQuery(query) else { return self.refusal(visit, "The request is too large or cannot be read.") }
            return await self.endSession(visit, query: query, confirmed: false)
        }
        router.post(RouterPath(base + "/end-session")) { request, _ in
            await self.form(request) { visit, form in
                let query = form["request"] ?? ""
                guard Self.readableLogoutQuery(query) else { return self.refusal(visit, "The request is too large or cannot be read.") }
                guard form["decision"] == "signOut" else { return self.redirect("/", visit: visit) }
                return await self.endSession(visit, query: query, confirmed: true)
            }
        }
        router.get(RouterPath(base + "/applications")) { request, _ in
            let notice = request.uri.queryParameters.get("done") == "revoked" ? "Its access has ended." : nil
            return await self.applicationsPage(self.visit(request), notice: notice)
        }
        router.post(RouterPath(base + "/applications/revoke")) { request, _ in
            await self.form(request) { visit, form in
                guard let session = visit.session else { return self.redirect("/", visit: visit) }
                do {
                    try await self.operations.asSession(session) { try await self.operations.revokeApplication(clientId: form["clientId"] ?? "") }
                    return self.redirect("/applications?done=revoked", visit: visit)
                } catch {
                    let problem = self.consoleProblem(error)
                    guard problem.status == .notFound else { return self.problemPage(problem, visit: visit) }
                    return await self.applicationsPage(visit, error: problem.detail ?? problem.title, status: .notFound)
                }
            }
        }
    }

    /// The applications with access to the account (the owner's consents and the sign-ins holding tokens), each with
    /// its button to take the access away.
    func applicationsPage(_ visit: Visit, notice: String? = nil, error: String? = nil, status: HTTPResponse.Status = .ok) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        do {
            let applications = try await operations.asSession(session) { try await operations.applications() }
            return page("applications", title: "Applications", visit: visit, status: status) { page in
                page.notice = notice
                page.formError = error
                page.applications = applications.map { application in
                    let may = application.scopes.compactMap { Self.scopeDescriptions[$0] }.joined(separator: "; ")
                    let since = (application.consentedAt ?? application.lastUsedAt).map { " · since \($0.formatted(date: .abbreviated, time: .omitted))" } ?? ""
                    return ConsolePage.IdentityRow(id: application.clientId, provider: application.name, detail: may + since)
                }
                page.hasApplications = !page.applications.isEmpty
            }
        } catch {
            let problem = consoleProblem(error)
            if problem.status == .unauthorized { return redirect("/", visit: visit, session: .some(nil)) }
            return problemPage(problem, visit: visit)
        }
    }

    private func authorize(_ request: Request) async -> Response {
        let visit = visit(request)
        let query = request.uri.query ?? ""
        guard query.utf8.count <= Self.maximumAuthorizationQueryBytes, let form = OAuthForm(query) else {
            return refusal(visit, "The request is too large or cannot be read.")
        }
        let flow = AuthorizationFlow(query: query, requestedAt: Date().timeIntervalSince1970, expiresAt: Int(Date().timeIntervalSince1970) + Self.authorizationFlowSeconds)
        return await decide(visit, form: form, flow: flow, throughForm: false)
    }

    /// After a sign-in: the waiting request, asked again.
    private func resumeAuthorization(_ request: Request) async -> Response {
        let visit = visit(request)
        guard let flow = request.cookies[Self.authorizationCookie].flatMap({ openAuthorization($0.value) }), let form = OAuthForm(flow.query) else {
            return redirect("/", visit: visit)
        }
        return await decide(visit, form: form, flow: flow, throughForm: true, resumed: true)
    }

    private func consent(_ visit: Visit, form: ConsoleForm, flow: AuthorizationFlow?) async -> Response {
        guard let flow, let query = OAuthForm(flow.query) else {
            return refusal(visit, "This request has expired. Go back to the application and try again.")
        }
        let allowed = form["decision"] == "allow"
        return await decide(visit, form: query, flow: flow, throughForm: true, consentGiven: allowed, consentDenied: !allowed)
    }

    /// Asks Identity and does what it says. After a form (a sign-in, the consent page) the browser is sent on by the
    /// page: the pages' CSP lets forms, and the redirects that follow them, go to this site only.
    private func decide(
        _ visit: Visit, form: OAuthForm, flow: AuthorizationFlow, throughForm: Bool, resumed: Bool = false, consentGiven: Bool = false, consentDenied: Bool = false
    ) async -> Response {
        var flow = flow
        let answer: IdentityOpenIDAuthorization
        do {
            answer = try await operations.asSession(visit.session) {
                try await operations.openIDAuthorize(
                    session: visit.session, query: form, requestedAt: Date(timeIntervalSince1970: flow.requestedAt), consentGiven: consentGiven,
                    consentDenied: consentDenied
                )
            }
        } catch {
            return problemPage(consoleProblem(error), visit: visit)
        }
        // Signed in again as asked: the session it replaces ends now (not when the application asked; another
        // account's session, which this one cannot end, idles out with its cookie gone).
        if resumed, answer.outcome != .signIn, let replaced = flow.replacing, let session = visit.session {
            _ = try? await operations.asSession(session) { try await operations.endSession(id: replaced, currentPassword: nil) }
            flow.replacing = nil
        }
        var response: Response
        switch answer.outcome {
        case .redirect:
            guard let location = answer.location else { return refusal(visit, "The request cannot go on.") }
            response = backToApplication(location, afterForm: throughForm, visit: visit)
            response.setCookie(cookie(Self.authorizationCookie, "", visit: visit, sameSite: .lax, maxAge: 0))
            return response
        case .refused:
            var refused = refusal(visit, answer.errorDescription ?? "This request cannot be answered.")
            refused.setCookie(cookie(Self.authorizationCookie, "", visit: visit, sameSite: .lax, maxAge: 0))
            return refused
        case .consent:
            let client = answer.client?.name ?? "An application"
            response = page("consent", title: "Allow \(client)?", visit: visit) { page in
                page.consentClient = client
                page.consentScopes = (answer.scopes ?? []).compactMap { Self.scopeDescriptions[$0] }
            }
        case .signIn:
            if resumed {
                // Signed in just now and still not enough: do not go round again.
                var refused = refusal(visit, "Konto could not sign you in for this application. Go back to it and try again.")
                refused.setCookie(cookie(Self.authorizationCookie, "", visit: visit, sameSite: .lax, maxAge: 0))
                return refused
            }
            if let session = visit.session {
                // A sign-in again (prompt=login, max_age, a second factor asked for): the sign-in page while this
                // session lasts; the new sign-in replaces it once it succeeds (any page can send a browser here, so
                // this must end nothing).
                flow.replacing = try? await operations.asSession(session) { try await operations.deviceSessions() }.first(where: \.isCurrent)?.id
                response = redirect("/sign-in-again", visit: visit)
            } else {
                response = redirect("/?done=signInToContinue", visit: visit)
            }
        }
        response.setCookie(cookie(Self.authorizationCookie, sealAuthorization(flow), visit: visit, sameSite: .lax, maxAge: Self.authorizationFlowSeconds))
        return response
    }

    /// RP-initiated logout (docs/OIDC.md): Identity decides whether the request proves where it comes from; when it
    /// does not, the person is asked on a page whose form carries the request back (CSRF-checked).
    private func endSession(_ visit: Visit, query: String, confirmed: Bool) async -> Response {
        let answer: IdentityOpenIDLogout
        do {
            answer = try await operations.asSession(visit.session) {
                try await operations.openIDLogout(session: visit.session, query: OAuthForm(query), confirmed: confirmed)
            }
        } catch {
            return problemPage(consoleProblem(error), visit: visit)
        }
        switch answer.outcome {
        case .refused:
            return refusal(visit, answer.errorDescription ?? "This request cannot be answered.")
        case .confirm:
            return page("endSession", title: "Sign out?", visit: visit) { page in
                page.endSessionClient = answer.client?.name
                page.endSessionQuery = query
            }
        case .loggedOut:
            guard let location = answer.location else { return redirect("/?done=loggedOut", visit: visit, session: .some(nil)) }
            var response = backToApplication(location, afterForm: confirmed, visit: visit)
            response.setCookie(endedSessionCookie(visit))
            return response
        }
    }

    /// A logout request (the endpoint's query, or the confirmation form's copy of it) within bounds and readable.
    static func readableLogoutQuery(_ query: String) -> Bool {
        query.utf8.count <= maximumLogoutQueryBytes && (query.isEmpty || OAuthForm(query) != nil)
    }

    /// Sends the browser on to a client's address: a redirect, or after a form the "continue" page (the pages' CSP lets
    /// forms, and the redirects that follow them, go to this site only).
    private func backToApplication(_ location: String, afterForm: Bool, visit: Visit) -> Response {
        guard afterForm else {
            var headers = Self.securityHeaders
            headers[.location] = location
            return Response(status: .seeOther, headers: headers)
        }
        return page("continue", title: "Back to the application", visit: visit) { page in
            page.refreshURL = location
            page.continueLabel = "Continue"
        }
    }

    private func refusal(_ visit: Visit, _ message: String) -> Response {
        page("problem", title: "This request cannot be answered", visit: visit, status: .badRequest) { $0.formError = message }
    }

    private func sealAuthorization(_ flow: AuthorizationFlow) -> String {
        signedCookieValue(flow, purpose: "oauth-authorize")
    }

    /// The waiting request, when this console signed it and it has not expired.
    func openAuthorization(_ value: String) -> AuthorizationFlow? {
        openSignedCookieValue(value, as: AuthorizationFlow.self, purpose: "oauth-authorize", limit: 4_096)
            .flatMap { $0.expiresAt > Int(Date().timeIntervalSince1970) ? $0 : nil }
    }
}

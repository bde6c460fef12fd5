import Foundation
import GatewayService
import HTTPTypes
import Hummingbird
import KontoModel

/// The identities linked to the account: the list, linking one through the provider's own sign-in (the code flow of
/// "Continue with …", its callback shared, the flow marked as a link), and unlinking one; both security-related, so
/// the current password is asked for once the privileged window has shut. Never the account's last way in.
extension AccountConsole {
    func registerIdentities(on router: Router<GatewayRequestContext>) {
        let base = options.basePath
        router.get(RouterPath(base + "/identities")) { request, _ in
            let notice: String? = switch request.uri.queryParameters.get("done") {
            case "linked": "Linked: it signs you in to this account from now on."
            case "unlinked": "Unlinked."
            default: nil
            }
            return await self.identitiesPage(self.visit(request), notice: notice)
        }
        router.post(RouterPath(base + "/identities/link")) { request, _ in
            await self.form(request) { visit, form in
                guard visit.session != nil else { return self.redirect("/", visit: visit) }
                return await self.startProviderFlow(visit, provider: form["provider"] ?? "", link: true)
            }
        }
        router.post(RouterPath(base + "/identities/link/complete")) { request, _ in
            let flow = request.cookies[Self.providerCookie].flatMap { self.openFlow($0.value) }
            return await self.form(request, credentials: true) { visit, form in await self.completeLink(visit, form, flow: flow) }
        }
        router.post(RouterPath(base + "/identities/unlink")) { request, _ in await self.form(request, credentials: true, self.unlinkIdentity) }
    }

    func identitiesPage(_ visit: Visit, notice: String? = nil, error: String? = nil, status: HTTPResponse.Status = .ok) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        do {
            let (identities, providers) = try await operations.asSession(session) {
                (try await operations.linkedIdentities(), try await operations.identityProviders())
            }
            let names = Dictionary(providers.map { ($0.name, $0.displayName) }, uniquingKeysWith: { first, _ in first })
            return page("identities", title: "Sign-in with other services", visit: visit, status: status) { page in
                page.notice = notice
                page.formError = error
                page.identities = identities.map { identity in
                    let added = "added \(identity.createdAt.formatted(date: .abbreviated, time: .omitted))"
                    let used = identity.lastUsedAt.map { ", last used \($0.formatted(date: .abbreviated, time: .omitted))" } ?? ""
                    return ConsolePage.IdentityRow(
                        id: identity.id, provider: names[identity.provider] ?? identity.provider, detail: (identity.email.map { $0 + " · " } ?? "") + added + used
                    )
                }
                page.hasIdentities = !page.identities.isEmpty
                // Each provider can be linked once a public address gives its callback (the flow needs one).
                page.providers = options.publicURL == nil ? [] : providers.map { ConsolePage.ProviderLink(name: $0.name, displayName: $0.displayName) }
            }
        } catch {
            return factorProblem(error, visit: visit)
        }
    }

    /// The provider's callback for a link: the code linked with the flow's verifier; the current password asked for
    /// first when the window has shut (the code, still unexchanged, goes into the form; its verifier stays in the
    /// flow's cookie, so the code alone is of no use).
    func linkCallback(_ visit: Visit, flow: ProviderFlow, code: String?, redirectURI: String) async -> Response {
        guard let code else {
            var response = await identitiesPage(visit, error: "The sign-in with the provider was cancelled or refused.", status: .unauthorized)
            response.setCookie(cookie(Self.providerCookie, "", visit: visit, sameSite: visit.secure ? .none : .lax, maxAge: 0))
            return response
        }
        return await link(visit, flow: flow, code: code, redirectURI: redirectURI, currentPassword: nil)
    }

    private func completeLink(_ visit: Visit, _ form: ConsoleForm, flow: ProviderFlow?) async -> Response {
        guard let flow, flow.link == true, flow.expiresAt > Int(Date().timeIntervalSince1970), let redirectURI = redirectURI(flow.provider) else {
            return page("problem", title: "Please try again", visit: visit, status: .forbidden) { page in
                page.formError = "This link has expired or did not start in this browser. Go back and try again."
            }
        }
        let current = form["currentPassword"].flatMap { $0.isEmpty ? nil : $0 }
        return await link(visit, flow: flow, code: form["token"] ?? "", redirectURI: redirectURI, currentPassword: current)
    }

    static func linkPasswordForm(code: String) -> ConsolePage.Form {
        .currentPasswordFirst(mainId: "link-password", formPrefix: "link", heading: "Link the identity", action: "/identities/link/complete", submitLabel: "Link", token: code)
    }

    private func link(_ visit: Visit, flow: ProviderFlow, code: String, redirectURI: String, currentPassword: String?) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        var response: Response
        do {
            try await operations.asSession(session) {
                try await operations.linkIdentity(
                    provider: flow.provider, code: code, codeVerifier: flow.verifier, redirectURI: redirectURI, nonce: flow.nonce, currentPassword: currentPassword
                )
            }
            response = redirect("/identities?done=linked", visit: visit)
        } catch {
            let problem = consoleProblem(error)
            switch problem.code {
            case AccountError.Code.reauthenticationRequired, AccountError.Code.wrongCredentials where currentPassword != nil:
                // The flow's cookie stays for the password's answer.
                return securedStepRefused(error, asking: Self.linkPasswordForm(code: code), title: "Link the identity", passwordGiven: currentPassword != nil, visit: visit)
            case AccountError.Code.secondFactorRequired, AccountError.Code.unauthenticated:
                response = factorProblem(error, visit: visit)
            default:
                guard problem.status.code < 500 else { return problemPage(problem, visit: visit) }
                response = await identitiesPage(visit, error: problem.detail ?? problem.title, status: problem.status)
            }
        }
        response.setCookie(cookie(Self.providerCookie, "", visit: visit, sameSite: visit.secure ? .none : .lax, maxAge: 0))
        return response
    }

    static func unlinkForm(_ identityId: String) -> ConsolePage.Form {
        .currentPasswordFirst(mainId: "unlink-password", formPrefix: "unlink", heading: "Unlink the identity", action: "/identities/unlink", submitLabel: "Unlink", token: identityId)
    }

    private func unlinkIdentity(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        let identityId = form["identityId"] ?? form["token"] ?? ""
        let current = form["currentPassword"].flatMap { $0.isEmpty ? nil : $0 }
        do {
            try await operations.asSession(session) { try await operations.unlinkIdentity(id: identityId, currentPassword: current) }
            return redirect("/identities?done=unlinked", visit: visit)
        } catch {
            let problem = consoleProblem(error)
            switch problem.code {
            case AccountError.Code.lastSignInMethod, AccountError.Code.identityNotFound:
                return await identitiesPage(visit, error: problem.detail ?? problem.title, status: problem.status)
            default:
                return securedStepRefused(error, asking: Self.unlinkForm(identityId), title: "Unlink the identity", passwordGiven: current != nil, visit: visit)
            }
        }
    }
}

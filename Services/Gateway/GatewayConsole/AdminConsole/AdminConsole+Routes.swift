import Foundation
import GatewayService
import HTTPTypes
import Hummingbird
import KontoModel

extension AdminConsole {
    func register(on router: Router<GatewayRequestContext>) {
        let base = Self.basePath
        router.get(RouterPath(base)) { request, _ in self.home(request) }
        router.get(RouterPath(base + "/console.css")) { _, _ in AccountConsole.asset(ConsoleAssets.stylesheet, contentType: "text/css; charset=utf-8") }
        router.get(RouterPath(base + "/favicon.svg")) { _, _ in AccountConsole.asset(ConsoleAssets.icon, contentType: "image/svg+xml") }
        router.post(RouterPath(base + "/sign-in")) { request, _ in await self.form(request, signedIn: false) { visit, form, _ in await self.signIn(visit, form) } }
        router.post(RouterPath(base + "/sign-out")) { request, _ in await self.form(request, signedIn: false) { visit, _, _ in self.redirect("/", visit: visit, session: .some(nil)) } }
        router.get(RouterPath(base + "/accounts")) { request, _ in await self.signedIn(request) { try await self.search(request, $0, $1) } }
        router.get(RouterPath(base + "/accounts/:account")) { request, context in
            let accountId = context.parameters.get("account") ?? ""
            let done = request.uri.queryParameters.get("done").flatMap { AccountAction(rawValue: String($0)) }
            return await self.signedIn(request) { try await self.accountPage(accountId, $0, $1, done: done) }
        }
        // The account's actions: each a form posting to the account's page's path, answered by a redirect back to it.
        for action in AccountAction.posted {
            router.post(RouterPath(base + "/accounts/:account/" + action.rawValue)) { request, context in
                let accountId = context.parameters.get("account") ?? ""
                return await self.form(request) { visit, form, key in try await self.perform(action, accountId: accountId, form: form, visit, key) }
            }
        }
        registerChanges(on: router)
        router.get(RouterPath(base + "/audit")) { request, _ in await self.signedIn(request) { try await self.auditPage(request, $0, $1) } }
        router.get(RouterPath(base + "/deliveries")) { request, _ in await self.signedIn(request) { try await self.deliveriesPage(request, $0, $1) } }
        router.post(RouterPath(base + "/deliveries/redeliver")) { request, _ in
            await self.form(request) { visit, form, key in try await self.redeliver(form, visit, key) }
        }
    }

    // MARK: Plumbing

    /// Runs `render` for a signed-in browser with its key (and who the key is); a browser without a session is sent
    /// to sign in, one whose key was refused (revoked, expired) too, its cookie dropped.
    func signedIn(_ request: Request, _ render: (Visit, String) async throws -> Response) async -> Response {
        let visit = visit(request)
        guard let key = visit.key else { return redirect("/", visit: visit, session: .some(nil)) }
        do {
            return try await operations.asOperator(key) { try await render(visit, key) }
        } catch {
            return refusal(operations.problem(for: error), visit: visit)
        }
    }

    /// Reads a form POST, refuses it without a valid CSRF token (or, `signedIn`, without a session), and hands it on.
    func form(_ request: Request, signedIn: Bool = true, _ handle: (Visit, ConsoleForm, String) async throws -> Response) async -> Response {
        let visit = visit(request)
        var body = ""
        if let buffer = try? await request.body.collect(upTo: maximumBodyBytes) {
            body = String(buffer: buffer)
        }
        let form = ConsoleForm.decode(body)
        guard isSameSiteForm(request, form: form) else {
            return page("adminProblem", title: "Please try again", visit: visit, status: .forbidden) { page in
                page.formError = "This form has expired or did not come from this site. Reload the page and try again."
            }
        }
        guard let key = visit.key ?? (signedIn ? nil : "") else { return redirect("/", visit: visit, session: .some(nil)) }
        do {
            return try await operations.asOperator(key) { try await handle(visit, form, key) }
        } catch {
            return refusal(operations.problem(for: error), visit: visit)
        }
    }

    /// A refusal as a page: a key refused ends the session; a missing scope says which action it was.
    func refusal(_ problem: GatewayProblem, visit: Visit) -> Response {
        if problem.code == .adminKeyRefused {
            return redirect("/?ended=1", visit: visit, session: .some(nil))
        }
        return page("adminProblem", title: problem.title, visit: visit, status: problem.status) { page in
            page.formError = Self.message(for: problem)
        }
    }

    static func message(for problem: GatewayProblem) -> String {
        switch problem.status {
        case .notFound: "There is no such page or account."
        case .forbidden: "Your key does not hold the scope this needs (\(problem.detail ?? problem.title))."
        case .tooManyRequests: "Too many requests from your address. Wait a little and try again."
        default: problem.status.code >= 500 ? "Something went wrong. Try again in a moment." : (problem.detail ?? problem.title)
        }
    }

    func refusalPage(_ problem: GatewayProblem) -> Response {
        refusal(problem, visit: Visit(csrfCookie: "", isNewCSRFCookie: false, session: nil, secure: false))
    }

    static func date(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false).timeSeparator(.colon))
    }
}

import Foundation
import GatewayService
import Hummingbird
import HTTPTypes
import KontoModel

extension AccountConsole {
    /// Holds a verification link's token while its visitor signs in to confirm it (``startVerificationSignIn``): signed,
    /// like the other flows' cookies, and short-lived.
    static let verificationCookie = "konto_verify"
    static let verificationFlowSeconds = 30 * 60

    func registerVerification(on router: Router<GatewayRequestContext>) {
        let base = options.basePath
        router.get(RouterPath(base + "/verify")) { request, _ in
            self.verifyPage(self.visit(request), token: request.uri.queryParameters.get("token") ?? "")
        }
        router.post(RouterPath(base + "/verify")) { request, _ in await self.form(request, credentials: true, self.confirmVerification) }
        router.post(RouterPath(base + "/verify/sign-in")) { request, _ in await self.form(request, self.startVerificationSignIn) }
        router.get(RouterPath(base + "/verify/resume")) { request, _ in self.resumeVerification(request) }
        router.post(RouterPath(base + "/verify/request")) { request, _ in await self.form(request, credentials: true, self.requestVerification) }
    }

    /// The page a verification mail links to. Opening it confirms nothing: a button does (a POST with the token and
    /// CSRF), so a mail scanner that fetches links does not use the token up. Signed in, the button confirms with the
    /// session (the owner's proof: nothing ends). Signed out, the page offers to sign in first (and comes back here),
    /// or, for whoever did not create the account, to secure it: only that choice ends what the account had.
    func verifyPage(_ visit: Visit, token: String, formError: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        // Bounded like a bearer token; a longer one is no token of ours.
        let token = token.utf8.count <= 512 ? token : ""
        guard !token.isEmpty else {
            return page("problem", title: "Confirm your email address", visit: visit, status: status == .ok ? .badRequest : status) { page in
                page.formError = "This page needs the link from your message."
            }
        }
        return page("verify", title: "Confirm your email address", visit: visit, status: status) { page in
            page.verify = ConsolePage.Verify(token: token, signedIn: visit.session != nil)
            page.formError = formError
        }
    }

    /// "Sign in to confirm": the token waits in a cookie while the visitor signs in (any way the setup page offers
    /// but a mailed code, which would itself be the address's proof); the sign-in then comes back to the page
    /// (``redirect(_:visit:session:)``).
    func startVerificationSignIn(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        let token = form["token"] ?? ""
        guard !token.isEmpty, token.utf8.count <= 512 else { return verifyPage(visit, token: "") }
        var response = redirect(visit.session == nil ? "/?done=signInToVerify" : "/verify/resume", visit: visit)
        response.setCookie(cookie(
            Self.verificationCookie, signedCookieValue(token, purpose: "verify"), visit: visit, sameSite: .lax, maxAge: Self.verificationFlowSeconds
        ))
        return response
    }

    /// After the sign-in: the page again, now signed in, with the waiting token (the cookie goes).
    func resumeVerification(_ request: Request) -> Response {
        let visit = visit(request)
        let token = request.cookies[Self.verificationCookie].flatMap { openSignedCookieValue($0.value, as: String.self, purpose: "verify", limit: 1_024) }
        guard let token, visit.session != nil else { return redirect("/", visit: visit) }
        var response = verifyPage(visit, token: token)
        response.setCookie(cookie(Self.verificationCookie, "", visit: visit, sameSite: .lax, maxAge: 0))
        return response
    }

    /// The overview's "Send a new link".
    func requestVerification(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        do {
            try await operations.asSession(session) { try await operations.requestEmailVerification() }
        } catch {
            return problemPage(consoleProblem(error), visit: visit)
        }
        return redirect("/?done=verificationSent", visit: visit)
    }

    func confirmVerification(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        let token = form["token"] ?? ""
        let securing = visit.session == nil
        // Signed out, only "I did not create this account" confirms: any other form (an old page's button, a forged
        // post) would end the account's password and sessions without its owner having chosen that.
        guard !securing || form["intent"] == "secure" else {
            return verifyPage(visit, token: token, formError: "Sign in to confirm your address, or choose “I did not create this account”.", status: .unauthorized)
        }
        do {
            try await operations.asSession(visit.session) { try await operations.confirmEmailVerification(token: token) }
        } catch {
            let problem = consoleProblem(error)
            guard problem.status.code < 500 else { return problemPage(problem, visit: visit) }
            if problem.status == .unauthorized {
                // The browser's session has ended: the page as for a visitor signed out (nothing was confirmed).
                var signedOut = visit
                signedOut.session = nil
                var response = verifyPage(signedOut, token: token, formError: "Your session has ended. Sign in again to confirm your address.", status: .unauthorized)
                response.setCookie(endedSessionCookie(visit))
                return response
            }
            let message = securing
                ? problem.detail ?? problem.title
                : (problem.detail ?? problem.title) + " If it was sent to an account other than the one signed in here, log out and sign in to that one."
            return verifyPage(visit, token: token, formError: message, status: problem.status)
        }
        guard securing else {
            return donePage(
                .init(
                    mainId: "verified", heading: "Address confirmed",
                    text: "Thank you: your email address is confirmed. Nothing else on your account changed.",
                    linkId: "account-link", linkPath: "/", linkLabel: "Go to your account"
                ),
                visit: visit, endsSession: false
            )
        }
        // A first confirmation without a session ends what the account had before it (docs/IDENTITY.md,
        // "Pre-hijacked accounts"); the page says what that means here, the mail lists what went.
        return donePage(
            .init(
                mainId: "verified", heading: "Account secured",
                text: "Your email address is confirmed, and whatever was set up on this account before (a password, signed-in sessions, second factors, linked sign-ins) was removed; a mail lists it. Choose a password to sign in.",
                linkId: "account-link", linkPath: "/reset", linkLabel: "Choose a password"
            ),
            visit: visit, endsSession: false
        )
    }
}

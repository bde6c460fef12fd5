import GatewayService
import Hummingbird
import HTTPTypes

extension AccountConsole {
    /// The page a verification mail links to. Opening it confirms nothing: a button does (a POST with the token and
    /// CSRF), so a mail scanner that fetches links does not use the token up.
    func verifyPage(_ visit: Visit, token: String, formError: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        // Bounded like a bearer token; a longer one is no token of ours.
        let token = token.utf8.count <= 512 ? token : ""
        return formPage(
            .init(
                mainId: "verify", heading: "Confirm your email address",
                intro: "Confirm that the address this link was sent to is yours.",
                formId: "verify-form", action: "/verify", submitId: "verify-submit", submitLabel: "Confirm my address",
                cancels: false, backToLogin: true, hasToken: true, token: token
            ),
            title: "Confirm your email address",
            fields: [],
            formError: formError ?? (token.isEmpty ? "This page needs the link from your message." : nil),
            visit: visit, status: status
        )
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
        do {
            // The browser's session, if it has one, is the confirmer's: it stays when the address is proven first.
            try await operations.asSession(visit.session) { try await operations.confirmEmailVerification(token: token) }
        } catch {
            let problem = consoleProblem(error)
            guard problem.status.code < 500 else { return problemPage(problem, visit: visit) }
            return verifyPage(visit, token: token, formError: problem.detail ?? problem.title, status: problem.status)
        }
        // A first confirmation ends what the account had before it (docs/IDENTITY.md, "Pre-hijacked accounts"); the
        // page says what that means here, the mail lists what went.
        let text = visit.session == nil
            ? "Thank you: your email address is confirmed. If anything was set up on this account before (a password, sessions, second factors), it was removed, and a mail lists it: choose a password to sign in."
            : "Thank you: your email address is confirmed. If this was its first confirmation, other sessions and second factors added before it were removed (a mail lists them); your password and this session stay."
        return donePage(
            .init(
                mainId: "verified", heading: "Address confirmed", text: text,
                linkId: "account-link", linkPath: visit.session == nil ? "/reset" : "/", linkLabel: visit.session == nil ? "Choose a password" : "Go to your account"
            ),
            visit: visit, endsSession: false
        )
    }
}

import GatewayService
import HTTPTypes
import Hummingbird
import KontoModel

/// Sign-in with a code mailed to the userId, where the deployment offers it: ask for the code, then enter it. The
/// answers are the same for an address without an account (Identity's), and so are the pages.
extension AccountConsole {
    func registerEmailCode(on router: Router<GatewayRequestContext>) {
        let base = options.basePath
        router.get(RouterPath(base + "/login/code")) { request, _ in
            let visit = self.visit(request)
            guard self.options.offersEmailCode else { return self.redirect("/", visit: visit) }
            return self.emailCodeRequestPage(visit)
        }
        router.post(RouterPath(base + "/login/code")) { request, _ in await self.form(request, credentials: true, self.requestEmailCode) }
        router.post(RouterPath(base + "/login/code/confirm")) { request, _ in await self.form(request, credentials: true, self.logInWithEmailCode) }
        router.get(RouterPath(base + "/login/code/confirm")) { request, _ in self.redirect("/login/code", visit: self.visit(request)) }
    }

    private func emailCodeRequestPage(_ visit: Visit, userId: String = "", errors: [String: String] = [:], formError: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        formPage(
            .init(
                mainId: "email-code", heading: "Sign in with a code by mail",
                intro: "Enter your email address; if an account has it, a code to sign in is sent to it.",
                formId: "email-code-request-form", action: "/login/code", submitId: "email-code-request-submit", submitLabel: "Send the code",
                cancels: false, backToLogin: true
            ),
            title: "Sign in with a code by mail",
            fields: [userIdField(id: "email-code-userId", value: userId, error: errors["userId"])],
            formError: formError, visit: visit, status: status
        )
    }

    private func emailCodeEntryPage(_ visit: Visit, userId: String, errors: [String: String] = [:], formError: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        formPage(
            .init(
                mainId: "email-code-entry", heading: "Enter your code",
                intro: mailSent("If an account has this address, a code is on its way to it. It works once, for 10 minutes."),
                formId: "email-code-form", action: "/login/code/confirm", submitId: "email-code-submit", submitLabel: "Sign in",
                cancels: false, backToLogin: true
            ),
            title: "Enter your code",
            fields: [
                userIdField(id: "email-code-entry-userId", value: userId, error: errors["userId"]),
                ConsoleField(name: "code", id: "email-code", label: "Code from the mail", type: "text", error: errors["code"], autocomplete: "one-time-code"),
            ],
            formError: formError, visit: visit, status: status
        )
    }

    private func requestEmailCode(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard options.offersEmailCode else { return redirect("/", visit: visit) }
        let userId = form["userId"] ?? ""
        guard !userId.isEmpty else {
            return emailCodeRequestPage(visit, errors: ["userId": Self.required], status: .unprocessableContent)
        }
        do {
            try await operations.asSession(nil, device: visit.device) { try await operations.requestEmailCode(userId: userId) }
        } catch {
            // Identity answers alike for known and unknown users; what is left is a malformed address, throttling or an outage.
            let problem = consoleProblem(error)
            guard problem.status.code < 500 else { return problemPage(problem, visit: visit) }
            let fieldError = problem.fields.first { $0.key == "userId" }?.message
            return emailCodeRequestPage(
                visit, userId: userId, errors: fieldError.map { ["userId": $0] } ?? [:], formError: fieldError == nil ? problem.detail ?? problem.title : nil,
                status: problem.status
            )
        }
        return emailCodeEntryPage(visit, userId: userId)
    }

    private func logInWithEmailCode(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard options.offersEmailCode else { return redirect("/", visit: visit) }
        let userId = form["userId"] ?? ""
        // Typed from a mail: spaces between the digits are the reader's, not the code's.
        let code = (form["code"] ?? "").filter { !$0.isWhitespace }
        var missing: [String: String] = [:]
        if userId.isEmpty { missing["userId"] = Self.required }
        if code.isEmpty { missing["code"] = Self.required }
        guard missing.isEmpty else {
            return emailCodeEntryPage(visit, userId: userId, errors: missing, status: .unprocessableContent)
        }
        let device = visit.device ?? Self.randomToken()
        do {
            let answer = try await operations.asSession(nil, device: device) { try await operations.logIn(userId: userId, emailCode: code) }
            return signedIn(answer, visit: visit, device: device)
        } catch {
            let problem = consoleProblem(error)
            guard problem.status.code < 500 else { return problemPage(problem, visit: visit) }
            var errors: [String: String] = [:]
            for field in problem.fields where ["userId", "code"].contains(field.key) { errors[field.key] = field.message }
            return emailCodeEntryPage(visit, userId: userId, errors: errors, formError: errors.isEmpty ? problem.detail ?? problem.title : nil, status: problem.status)
        }
    }
}

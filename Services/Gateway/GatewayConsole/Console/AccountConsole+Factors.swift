import Foundation
import GatewayService
import HTTPTypes
import Hummingbird
import KontoModel
import KontoQRCode

/// The second factors in the console: the list, an authenticator app's enrolment (its otpauth URI as a QR code the
/// console draws itself), recovery codes shown once, removal, and the reauthentication they need (the password, or
/// a code once the account has a second factor).
extension AccountConsole {
    static let reauthenticateForm = ConsolePage.Form(
        mainId: "reauthenticate", heading: "Confirm it is you",
        intro: "Enter your password, or a code from your authenticator app or a recovery code if your account has one.",
        formId: "reauthenticate-form", action: "/reauthenticate", submitId: "reauthenticate-submit", submitLabel: "Continue"
    )

    func registerFactors(on router: Router<GatewayRequestContext>) {
        let base = options.basePath
        router.get(RouterPath(base + "/factors")) { request, _ in await self.factorsPage(self.visit(request), notice: Self.factorNotice(request)) }
        router.post(RouterPath(base + "/factors/totp")) { request, _ in await self.form(request, self.startTOTP) }
        router.post(RouterPath(base + "/factors/totp/confirm")) { request, _ in await self.form(request, credentials: true, self.confirmTOTP) }
        router.post(RouterPath(base + "/recovery-codes")) { request, _ in await self.form(request, self.newRecoveryCodes) }
        router.post(RouterPath(base + "/factors/remove")) { request, _ in await self.form(request, self.removeFactor) }
        router.get(RouterPath(base + "/reauthenticate")) { request, _ in
            let visit = self.visit(request)
            guard visit.session != nil else { return self.redirect("/", visit: visit) }
            return await self.reauthenticatePage(visit)
        }
        router.post(RouterPath(base + "/reauthenticate")) { request, _ in await self.form(request, credentials: true, self.reauthenticate) }
    }

    private static func factorNotice(_ request: Request) -> String? {
        switch request.uri.queryParameters.get("done") {
        case "totp": "Authenticator app added: from now on a login asks for its code."
        case "removed": "Removed."
        case "removedLast": "Removed. No second factor is left: your password alone signs in again."
        case "reauthenticated": "Confirmed. You can change your second factors now."
        case "passkey": "Passkey added: from now on a login with the password asks for it, and it signs you in on its own."
        default: nil
        }
    }

    func factorsPage(_ visit: Visit, notice: String? = nil) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        do {
            let factors = try await operations.asSession(session) { try await operations.factors() }
            return page("factors", title: "Second factor", visit: visit) { page in
                page.notice = notice
                page.factors = factors.filter { !$0.pending }.map { factor in
                    let added = "added \(factor.createdAt.formatted(date: .abbreviated, time: .omitted))"
                    let detail = switch factor.type {
                    case "recoveryCodes": "\(factor.remaining ?? 0) unused"
                    case "passkey": factor.name.lowercased().contains("passkey") ? added : "passkey, " + added
                    default: added
                    }
                    return ConsolePage.FactorRow(id: factor.id, name: factor.name, detail: detail)
                }
                page.hasFactors = !page.factors.isEmpty
            }
        } catch {
            return factorProblem(error, visit: visit)
        }
    }

    /// The enrolment's first step asks for the current password on its own page once the privileged window has closed
    /// (an account without a second factor yet; with one, reauthentication with a code is needed instead).
    static let totpPasswordForm = ConsolePage.Form.currentPasswordFirst(
        mainId: "totp-password", formPrefix: "totp-password", heading: "Add an authenticator app", action: "/factors/totp", submitLabel: "Continue"
    )

    private func startTOTP(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        let current = form["currentPassword"].flatMap { $0.isEmpty ? nil : $0 }
        do {
            let enrolment = try await operations.asSession(session) { try await operations.enrollTOTP(currentPassword: current) }
            return totpPage(visit, Self.totpEnrolment(factorId: enrolment.factorId, uri: enrolment.otpauthURI, secret: enrolment.secret))
        } catch {
            return securedStepRefused(error, asking: Self.totpPasswordForm, title: "Add an authenticator app", passwordGiven: current != nil, visit: visit)
        }
    }

    /// The enrolment's page: the QR code of `uri` and the secret, beside the form for the first code.
    static func totpEnrolment(factorId: String, uri: String, secret: String) -> ConsolePage.TOTPEnrolment {
        let code = try? QRCode(uri)
        return ConsolePage.TOTPEnrolment(
            factorId: factorId, hasQR: code != nil, qrPath: code?.svgPath() ?? "", qrExtent: (code?.size ?? 0) + 8, secret: secret, uri: uri
        )
    }

    /// The enrolment shown again after a wrong first code, from the otpauth URI the page's form carried back (the
    /// browser has it already; Identity shows a secret once): only a TOTP URI with a base32 secret, else the form alone.
    static func retriedEnrolment(factorId: String, uri: String?) -> ConsolePage.TOTPEnrolment {
        guard let uri, uri.utf8.count <= 512, uri.hasPrefix("otpauth://totp/"),
              let secret = URLComponents(string: uri)?.queryItems?.first(where: { $0.name == "secret" })?.value,
              (16...128).contains(secret.count), secret.allSatisfy({ ("A"..."Z").contains($0) || ("2"..."7").contains($0) })
        else {
            return ConsolePage.TOTPEnrolment(factorId: factorId, hasQR: false, qrPath: "", qrExtent: 0, secret: "", uri: "", error: nil)
        }
        return totpEnrolment(factorId: factorId, uri: uri, secret: secret)
    }

    private func totpPage(_ visit: Visit, _ enrolment: ConsolePage.TOTPEnrolment, status: HTTPResponse.Status = .ok) -> Response {
        page("totp", title: "Add an authenticator app", visit: visit, status: status) { $0.totp = enrolment }
    }

    private func confirmTOTP(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        let factorId = form["factorId"] ?? ""
        let code = (form["code"] ?? "").trimmingCharacters(in: .whitespaces)
        // A retry shows the QR code and the secret again, so the user can scan it afresh or check what they typed.
        let retry = Self.retriedEnrolment(factorId: factorId, uri: form["otpauthURI"])
        guard !code.isEmpty else {
            var page = retry
            page.error = Self.required
            return totpPage(visit, page, status: .unprocessableContent)
        }
        do {
            try await operations.asSession(session) { try await operations.confirmTOTP(factorId: factorId, code: code) }
            return redirect("/factors?done=totp", visit: visit)
        } catch {
            let problem = consoleProblem(error)
            guard problem.status.code < 500, problem.status != .unauthorized || problem.code == AccountError.Code.wrongSecondFactor else {
                return factorProblem(error, visit: visit)
            }
            var page = retry
            page.error = problem.code == AccountError.Code.wrongSecondFactor ? "The code is wrong: enter the one the app shows now." : (problem.detail ?? problem.title)
            return totpPage(visit, page, status: problem.status)
        }
    }

    private func newRecoveryCodes(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        do {
            let codes = try await operations.asSession(session) { try await operations.regenerateRecoveryCodes() }
            return page("codes", title: "Recovery codes", visit: visit) { $0.codes = codes }
        } catch {
            return factorProblem(error, visit: visit)
        }
    }

    private func removeFactor(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        let factorId = form["factorId"] ?? ""
        do {
            let left = try await operations.asSession(session) { try await operations.removeFactor(id: factorId) }
            return redirect(left == 0 ? "/factors?done=removedLast" : "/factors?done=removed", visit: visit)
        } catch {
            return factorProblem(error, visit: visit)
        }
    }

    func reauthenticatePage(_ visit: Visit, error: String? = nil, status: HTTPResponse.Status = .ok) async -> Response {
        let options = try? await operations.asSession(nil) { try await operations.passkeyLoginOptions() }
        let passkey = options.map {
            ConsolePage.Passkey(formId: "passkey-reauthenticate-form", action: "/reauthenticate/passkey", ceremony: "get", options: $0, buttonId: "passkey-reauthenticate", label: "Use a passkey")
        }
        return formPage(Self.reauthenticateForm, title: "Confirm it is you", fields: [
            ConsoleField(name: "password", label: "Password", type: "password", error: error, autocomplete: "current-password"),
            ConsoleField(name: "code", label: "Or a code from your authenticator app, or a recovery code", type: "text", autocomplete: "one-time-code"),
        ], formError: nil, visit: visit, status: status, passkey: passkey)
    }

    private func reauthenticate(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        let password = form["password"].flatMap { $0.isEmpty ? nil : $0 }
        let typed = form["code"].map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        guard password != nil || typed != nil else { return await reauthenticatePage(visit, error: Self.required, status: .unprocessableContent) }
        let isAppCode = typed.map { $0.count == 6 && $0.allSatisfy(\.isNumber) } ?? false
        do {
            let fresh = try await operations.asSession(session) {
                try await operations.reauthenticate(password: password, code: isAppCode ? typed : nil, recoveryCode: isAppCode ? nil : typed)
            }
            return redirect("/factors?done=reauthenticated", visit: visit, session: fresh.map { ($0.token, $0.expiresAt) })
        } catch {
            let problem = consoleProblem(error)
            if problem.code == AccountError.Code.unauthenticated { return redirect("/", visit: visit, session: .some(nil)) }
            guard problem.status.code < 500 else { return problemPage(problem, visit: visit) }
            let message = [AccountError.Code.wrongCredentials, .wrongSecondFactor].contains(problem.code) ? "That is not right." : (problem.detail ?? problem.title)
            return await reauthenticatePage(visit, error: message, status: problem.status)
        }
    }

    /// A refusal on the factor pages: the password (or, with a second factor, a code) again, or back to the login.
    /// A security-related step's refusal: the current password asked for (again, when the one given was wrong) on
    /// `form`; any other refusal as the factor pages show it.
    func securedStepRefused(_ error: any Error, asking form: ConsolePage.Form, title: String, passwordGiven: Bool, visit: Visit) -> Response {
        let problem = consoleProblem(error)
        let passwordField = { (error: String?) in
            ConsoleField(name: "currentPassword", label: "Current password", type: "password", error: error, autocomplete: "current-password")
        }
        switch problem.code {
        case AccountError.Code.reauthenticationRequired:
            return formPage(form, title: title, fields: [passwordField(nil)], formError: nil, visit: visit, status: problem.status)
        case AccountError.Code.wrongCredentials where passwordGiven:
            return formPage(form, title: title, fields: [passwordField("The password is wrong.")], formError: nil, visit: visit, status: problem.status)
        default:
            return factorProblem(error, visit: visit)
        }
    }

    func factorProblem(_ error: any Error, visit: Visit) -> Response {
        let problem = consoleProblem(error)
        switch problem.code {
        case AccountError.Code.reauthenticationRequired, AccountError.Code.secondFactorRequired:
            return redirect("/reauthenticate", visit: visit)
        case AccountError.Code.unauthenticated:
            return redirect("/", visit: visit, session: .some(nil))
        default:
            return problemPage(problem, visit: visit)
        }
    }
}

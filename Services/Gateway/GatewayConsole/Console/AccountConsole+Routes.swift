import GatewayService
import Foundation
import HTTPTypes
import Hummingbird
import KontoContracts
import KontoModel

extension AccountConsole {
    func register(on router: Router<GatewayRequestContext>) {
        let base = options.basePath
        router.get(RouterPath(base)) { request, _ in await self.home(request) }
        router.get(RouterPath(base + "/console.css")) { _, _ in Self.asset(ConsoleAssets.stylesheet, contentType: "text/css; charset=utf-8") }
        router.get(RouterPath(base + "/console.js")) { _, _ in Self.asset(ConsoleAssets.script, contentType: "text/javascript; charset=utf-8") }
        router.get(RouterPath(base + "/favicon.svg")) { _, _ in Self.asset(ConsoleAssets.icon, contentType: "image/svg+xml") }
        router.post(RouterPath(base + "/login")) { request, _ in await self.form(request, credentials: true, self.logIn) }
        registerFactors(on: router)
        registerSessions(on: router)
        registerIdentities(on: router)
        registerMail(on: router)
        registerExport(on: router)
        registerOpenID(on: router)
        router.get(RouterPath(base + "/second-factor")) { request, _ in
            self.secondFactorPage(self.visit(request), challenge: request.cookies[Self.challengeCookie]?.value, passkeyOptions: Self.challengeOptions(request))
        }
        router.post(RouterPath(base + "/second-factor")) { request, _ in
            let challenge = request.cookies[Self.challengeCookie]?.value
            return await self.form(request, credentials: true) { await self.completeSecondFactor($0, $1, challenge: challenge) }
        }
        registerPasskeys(on: router)
        registerEmailCode(on: router)
        registerProviders(on: router)
        router.get(RouterPath(base + "/signup")) { request, _ in self.signUpPage(self.visit(request), values: [:], errors: [:]) }
        router.post(RouterPath(base + "/signup")) { request, _ in await self.form(request, credentials: true, self.signUp) }
        router.post(RouterPath(base + "/anonymous")) { request, _ in await self.form(request, self.continueAnonymously) }
        router.post(RouterPath(base + "/logout")) { request, _ in await self.form(request, self.logOut) }
        router.post(RouterPath(base + "/logout-everywhere")) { request, _ in await self.form(request, self.logOutEverywhere) }
        router.get(RouterPath(base + "/edit")) { request, _ in await self.editPage(request) }
        // A new contact address is mailed: counted like the forms that take a password.
        router.post(RouterPath(base + "/edit")) { request, _ in await self.form(request, credentials: true, self.edit) }
        for change in [passwordChange, userIdChange] {
            router.get(RouterPath(base + change.form.action)) { request, _ in self.signedInPage(request) { self.securityPage(change, $0) } }
            router.post(RouterPath(base + change.form.action)) { request, _ in
                await self.form(request, credentials: true) { await self.securityChange(change, $0, $1) }
            }
        }
        router.get(RouterPath(base + "/delete")) { request, _ in self.signedInPage(request) { self.deletePage($0) } }
        router.post(RouterPath(base + "/delete")) { request, _ in await self.form(request, credentials: true, self.delete) }
        router.get(RouterPath(base + "/reset")) { request, _ in self.resetRequestPage(self.visit(request)) }
        router.post(RouterPath(base + "/reset")) { request, _ in await self.form(request, credentials: true, self.requestReset) }
        router.get(RouterPath(base + "/reset/confirm")) { request, _ in
            self.resetConfirmPage(self.visit(request), token: request.uri.queryParameters.get("token") ?? "")
        }
        router.post(RouterPath(base + "/reset/confirm")) { request, _ in await self.form(request, credentials: true, self.confirmReset) }
        registerVerification(on: router)
        // The targets of forms only: a browser that GETs one (a bookmark, a reload after a redirect) is sent home.
        for path in ["/login", "/anonymous", "/logout", "/logout-everywhere"] {
            router.get(RouterPath(base + path)) { request, _ in self.redirect("/", visit: self.visit(request)) }
        }
    }

    // MARK: Plumbing

    /// Reads a form POST, refuses it without a valid CSRF token, and hands it to `handle`. A form that takes a password
    /// or starts a reset (`credentials`) counts against the credential rate limit first.
    func form(_ request: Request, credentials: Bool = false, _ handle: (Visit, ConsoleForm) async -> Response) async -> Response {
        if credentials, let problem = operations.credentialAttempt(), let retryAfter = problem.retryAfter {
            var response = refusalPage(problem)
            response.headers[.retryAfter] = String(retryAfter)
            return response
        }
        let visit = visit(request)
        var body = ""
        if let buffer = try? await request.body.collect(upTo: options.maximumBodyBytes) {
            body = String(buffer: buffer)
        }
        let form = ConsoleForm.decode(body)
        guard isSameSiteForm(request, form: form) else {
            return page("problem", title: "Please try again", visit: visit, status: .forbidden) { page in
                page.formError = "This form has expired or did not come from this site. Reload the page and try again."
            }
        }
        return await handle(visit, form)
    }

    func consoleProblem(_ error: any Error) -> GatewayProblem {
        operations.problem(for: error)
    }

    /// The page for a failure no form field explains (a service away, throttling, an unexpected error).
    func problemPage(_ problem: GatewayProblem, visit: Visit) -> Response {
        let message: String
        switch problem.status.code {
        case 503, 504: message = "A service Konto needs is unavailable right now. Try again in a moment."
        case 500...: message = "Something went wrong. Try again in a moment."
        default: message = problem.detail ?? problem.title
        }
        return page("problem", title: "Something went wrong", visit: visit, status: problem.status) { $0.formError = message }
    }

    /// A refusal of the gateway's own (throttled, a body over the limit, no such page) as a page.
    func refusalPage(_ problem: GatewayProblem) -> Response {
        let visit = Visit(csrfCookie: "", isNewCSRFCookie: false, session: nil, secure: false)
        let message: String
        switch problem.status {
        case .notFound: message = "There is no such page."
        case .tooManyRequests: message = "Too many requests from your address. Wait a little and try again."
        case .contentTooLarge: message = "What you sent is too large."
        default: message = problem.status.code >= 500 ? "Something went wrong. Try again in a moment." : (problem.detail ?? problem.title)
        }
        return page("problem", title: problem.title, visit: visit, status: problem.status) { $0.formError = message }
    }

    func signedInPage(_ request: Request, _ render: (Visit) -> Response) -> Response {
        let visit = visit(request)
        guard visit.session != nil else { return redirect("/", visit: visit) }
        return render(visit)
    }

    /// Field errors by key (the first per key) and whatever the problem says besides.
    static func fieldErrors(_ problem: GatewayProblem) -> [String: String] {
        var errors: [String: String] = [:]
        for field in problem.fields where errors[field.key] == nil {
            errors[field.key] = field.message
        }
        return errors
    }

    static let required = AccountFieldError.missingValueMessage

    /// Notices the overview shows after a redirect, by a fixed name (no text of the request is ever shown).
    static let notices = [
        "saved": "Your details are saved.",
        "password": "Your password is changed, and your other sessions have ended.",
        "userId": "Your {userId} is changed.",
        "loggedOut": "You are logged out.",
        "loggedOutEverywhere": "You are logged out on every device.",
        "welcome": "Welcome! Your account is ready.",
        "verificationSent": "A new link is on its way to your email address.",
        "signInToContinue": "Sign in to continue to the application.",
        "signInToVerify": "Sign in with your password or a passkey to confirm your email address.",
        "signInAgain": "The application asks you to sign in again.",
    ]

    // MARK: AccountSetup and AccountOverview

    private func home(_ request: Request) async -> Response {
        let visit = visit(request)
        let done = request.uri.queryParameters.get("done")
        let notice = done.flatMap { Self.notices[$0] }.map { done == "verificationSent" ? mailSent($0) : $0 }
            .map { $0.replacingOccurrences(of: "{userId}", with: userIdNoun) }
        guard let session = visit.session else {
            return await setupPage(visit, userId: "", error: nil, notice: notice)
        }
        do {
            let account = try await currentAccount(session)
            return page("overview", title: "Your account", visit: visit) { page in
                page.notice = notice
                page.isAnonymous = account.isAnonymous
                page.awaitsVerification = account.details[EmailVerifiedKey.self] == false
                page.shown = schema.shown(account.details.publicValues)
            }
        } catch {
            let problem = consoleProblem(error)
            if problem.status == .unauthorized {
                // The session ended (logged out elsewhere, expired, account deleted): start again.
                var response = await setupPage(visit, userId: "", error: nil, notice: notice)
                response.setCookie(endedSessionCookie(visit))
                return response
            }
            return problemPage(problem, visit: visit)
        }
    }

    func setupPage(_ visit: Visit, userId: String, error: String?, notice: String?, fieldErrors: [String: String] = [:], status: HTTPResponse.Status = .ok) async -> Response {
        // Signing in with a passkey instead: options cost Identity no write (their challenge is signed, not stored).
        let passkeyOptions = try? await operations.asSession(nil) { try await operations.passkeyLoginOptions() }
        // Providers only where they can send the browser back here; none when Identity cannot be asked.
        let providers = options.publicURL == nil ? [] : await providerList.providers { try await operations.asSession(nil) { try await operations.identityProviders() } }
        return page("setup", title: "Log in", visit: visit, status: status) { page in
            page.providers = providers.map { ConsolePage.ProviderLink(name: $0.name, displayName: $0.displayName) }
            page.passkey = passkeyOptions.map { ConsolePage.Passkey(formId: "passkey-login-form", action: "/login/passkey", ceremony: "get", options: $0, buttonId: "passkey-login", label: "Sign in with a passkey") }
            page.notice = notice
            page.formError = error
            // Not on the way to an application: an anonymous session is no account to sign in to it with (the
            // authorization would only ask to sign in again).
            page.anonymous = options.allowsAnonymous && !visit.awaitsAuthorization
            // Not while a verification link waits for this sign-in: a mailed code proves the mailbox alone, so signing
            // in with one would be the address's first proof and end the password (docs/IDENTITY.md).
            page.emailCode = options.offersEmailCode && !visit.awaitsVerification
            page.fields = [
                userIdField(id: "login-userId", value: userId, error: fieldErrors["userId"]),
                ConsoleField(name: "password", id: "login-password", label: "Password", type: "password", error: fieldErrors["password"], autocomplete: "current-password"),
            ]
        }
    }

    private func logIn(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        let userId = form["userId"] ?? ""
        let password = form["password"] ?? ""
        var missing: [String: String] = [:]
        if userId.isEmpty { missing["userId"] = Self.required }
        if password.isEmpty { missing["password"] = Self.required }
        guard missing.isEmpty else {
            return await setupPage(visit, userId: userId, error: nil, notice: nil, fieldErrors: missing, status: .unprocessableContent)
        }
        // A browser without a device marker gets one with this login, so Identity remembers it.
        let device = visit.device ?? Self.randomToken()
        do {
            let answer = try await operations.asSession(nil, device: device) { try await operations.logIn(userId: userId, password: password) }
            return signedIn(answer, visit: visit, device: device)
        } catch {
            let problem = consoleProblem(error)
            guard problem.status.code < 500 else { return problemPage(problem, visit: visit) }
            // The same words for an unknown user and a wrong password, naming the field as the form does.
            let message = problem.code == AccountError.Code.wrongCredentials
                ? "The \(userIdNoun) or password is wrong." : problem.detail ?? problem.title
            return await setupPage(visit, userId: userId, error: message, notice: nil, status: problem.status)
        }
    }

    /// A first factor's answer (a password, a mailed code): the session's cookie, or the second factor's page with its
    /// challenge; the device marker set with it where the browser had none.
    func signedIn(_ answer: GatewayOperations.LogInAnswer, visit: Visit, device: String) -> Response {
        var response: Response
        switch answer {
        case .signedIn(let session):
            response = redirect("/", visit: visit, session: (session.token, session.expiresAt))
        case .secondFactor(let token, let expiresAt, _, let passkeyOptions):
            // No session yet: the challenge waits in a cookie of its own for the code (and the passkey options
            // allowing the account's passkeys, for the code page to offer them).
            response = redirect("/second-factor", visit: visit)
            response.setCookie(challengeCookie(token, expiresAt: expiresAt, visit: visit))
            if let passkeyOptions { response.setCookie(challengeOptionsCookie(passkeyOptions, expiresAt: expiresAt, visit: visit)) }
        }
        if visit.device == nil { response.setCookie(deviceCookie(device, visit: visit)) }
        return response
    }

    private func continueAnonymously(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard options.allowsAnonymous else { return redirect("/", visit: visit) }
        do {
            let session = try await operations.asSession(nil) { try await operations.signInAnonymously() }
            return redirect("/", visit: visit, session: (session.token, session.expiresAt))
        } catch {
            return problemPage(consoleProblem(error), visit: visit)
        }
    }

    private func logOut(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        if let session = visit.session {
            // An ended session is as good as logged out; the cookie goes either way.
            _ = try? await operations.asSession(session) { try await operations.logOut() }
        }
        return redirect("/?done=loggedOut", visit: visit, session: .some(nil))
    }

    private func logOutEverywhere(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit, session: .some(nil)) }
        do {
            try await operations.asSession(session) { try await operations.logOutEverywhere() }
            return redirect("/?done=loggedOutEverywhere", visit: visit, session: .some(nil))
        } catch {
            let problem = consoleProblem(error)
            if problem.status == .unauthorized { return redirect("/", visit: visit, session: .some(nil)) }
            return problemPage(problem, visit: visit)
        }
    }

    // MARK: SignupForm

    private func signUpPage(_ visit: Visit, values: [String: AccountValue], errors: [String: String], formError: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        page("signup", title: "Sign up", visit: visit, status: status) { page in
            page.formError = formError ?? (errors.isEmpty ? nil : "Some values need your attention.")
            page.isAnonymous = visit.session != nil
            page.categories = schema.categories(schema.signUpKeys, values: values, errors: errors)
        }
    }

    private func signUp(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        var (values, errors) = schema.values(from: form, keys: schema.signUpKeys)
        let userId = values.removeValue(forKey: UserIdKey.identifier).map(ConsoleField.text) ?? ""
        let password = values.removeValue(forKey: PasswordKey.identifier).map(ConsoleField.text) ?? ""
        // Kept for the form if it comes back (the page is never cached: no-store).
        var shown = values
        shown[UserIdKey.identifier] = .string(userId)
        shown[PasswordKey.identifier] = .string(password)
        if userId.isEmpty { errors[UserIdKey.identifier] = Self.required }
        if password.isEmpty { errors[PasswordKey.identifier] = Self.required }
        guard errors.isEmpty else { return signUpPage(visit, values: shown, errors: errors, status: .unprocessableContent) }
        do {
            let details = AccountDetails(values: values)
            let session = try await operations.asSession(visit.session) {
                try await operations.signUp(userId: userId, password: password, details: details)
            }
            return redirect("/?done=welcome", visit: visit, session: (session.token, session.expiresAt))
        } catch {
            let problem = consoleProblem(error)
            guard problem.status.code < 500 else { return problemPage(problem, visit: visit) }
            var errors = Self.fieldErrors(problem)
            if problem.code == AccountError.Code.credentialsTaken {
                errors[UserIdKey.identifier] = problem.detail ?? problem.title
            }
            return signUpPage(visit, values: shown, errors: errors, formError: errors.isEmpty ? problem.detail : nil, status: problem.status)
        }
    }

    // MARK: Edit

    private func currentAccount(_ session: String) async throws -> (details: AccountDetails, version: Int64, isAnonymous: Bool) {
        let account = try await operations.asSession(session) { try await operations.account() }
        return (account.details, account.version, account.isAnonymous)
    }

    private func editPage(_ request: Request) async -> Response {
        let visit = visit(request)
        guard let session = visit.session else { return redirect("/", visit: visit) }
        do {
            let (details, version, _) = try await currentAccount(session)
            return editForm(visit, values: details.publicValues, errors: [:], version: version)
        } catch {
            let problem = consoleProblem(error)
            if problem.status == .unauthorized { return redirect("/", visit: visit, session: .some(nil)) }
            return problemPage(problem, visit: visit)
        }
    }

    private func editForm(_ visit: Visit, values: [String: AccountValue], errors: [String: String], version: Int64, formError: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        page("edit", title: "Edit details", visit: visit, status: status) { page in
            page.formError = formError ?? (errors.isEmpty ? nil : "Some values need your attention.")
            page.version = String(version)
            page.categories = schema.categories(schema.editKeys, values: values, errors: errors)
        }
    }

    private func edit(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        let (values, errors) = schema.values(from: form, keys: schema.editKeys)
        let version = form["_version"].flatMap { Int64($0) } ?? 0
        guard errors.isEmpty else { return editForm(visit, values: values, errors: errors, version: version, status: .unprocessableContent) }
        do {
            let current = try await currentAccount(session).details
            // A key the form offers that had a value and was emptied is removed.
            let removed = schema.editKeys.map(\.0.identifier).filter { values[$0] == nil && current.contains($0) }
            try await operations.asSession(session) {
                try await operations.modify(set: AccountDetails(values: values), remove: removed, ifVersion: version)
            }
            return redirect("/?done=saved", visit: visit)
        } catch {
            let problem = consoleProblem(error)
            if problem.status == .unauthorized {
                // The session ended while the form was open: say that nothing was saved, rather than a bare setup page.
                var response = await setupPage(
                    visit, userId: "", error: "Your session ended before your changes were saved. Sign in again and make them once more.", notice: nil,
                    status: .unauthorized
                )
                response.setCookie(endedSessionCookie(visit))
                return response
            }
            guard problem.status.code < 500 else { return problemPage(problem, visit: visit) }
            if problem.status == .preconditionFailed || problem.code == AccountError.Code.versionConflict {
                // Someone else changed the account: say so, keep the input, and let a second save apply it.
                let latest = (try? await currentAccount(session))?.version ?? version
                return editForm(visit, values: values, errors: [:], version: latest, formError: "Your account changed in the meantime. Check your changes and save again.", status: .conflict)
            }
            let fieldErrors = Self.fieldErrors(problem)
            return editForm(visit, values: values, errors: fieldErrors, version: version, formError: fieldErrors.isEmpty ? problem.detail : nil, status: problem.status)
        }
    }
}

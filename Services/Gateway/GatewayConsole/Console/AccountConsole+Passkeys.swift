import Foundation
import GatewayService
import HTTPTypes
import Hummingbird
import KontoModel

/// Passkeys in the console: adding one (its options rendered into the page, the browser's WebAuthn API called by the
/// console's script, the answer posted back as a form), signing in with one alone, completing a login and confirming
/// it is you with one. Each answer goes through the same API handlers as HTTP callers'.
extension AccountConsole {
    static let challengeOptionsCookie = "konto_challenge_passkey"

    func registerPasskeys(on router: Router<GatewayRequestContext>) {
        let base = options.basePath
        router.post(RouterPath(base + "/factors/passkey")) { request, _ in await self.form(request, credentials: true, self.startPasskey) }
        router.post(RouterPath(base + "/factors/passkey/register")) { request, _ in await self.form(request, self.registerPasskey) }
        router.post(RouterPath(base + "/login/passkey")) { request, _ in await self.form(request, credentials: true, self.passkeyLogIn) }
        router.post(RouterPath(base + "/second-factor/passkey")) { request, _ in
            let challenge = request.cookies[Self.challengeCookie]?.value
            return await self.form(request, credentials: true) { await self.completeWithPasskey($0, $1, challenge: challenge) }
        }
        router.post(RouterPath(base + "/reauthenticate/passkey")) { request, _ in await self.form(request, credentials: true, self.reauthenticateWithPasskey) }
    }

    // MARK: The login's passkey options, beside its challenge

    /// The challenge's passkey options (JSON, base64url in the cookie: its characters need no quoting), as long as
    /// the challenge lives.
    func challengeOptionsCookie(_ options: String, expiresAt: Date, visit: Visit) -> Cookie {
        Cookie(
            name: Self.challengeOptionsCookie, value: Data(options.utf8).base64URLEncoded, maxAge: max(1, Int(expiresAt.timeIntervalSinceNow)),
            path: self.options.basePath, secure: visit.secure, httpOnly: true, sameSite: .strict
        )
    }

    func endedChallengeOptionsCookie(_ visit: Visit) -> Cookie {
        Cookie(name: Self.challengeOptionsCookie, value: "", maxAge: 0, path: options.basePath, secure: visit.secure, httpOnly: true, sameSite: .strict)
    }

    static func challengeOptions(_ request: Request) -> String? {
        guard let value = request.cookies[challengeOptionsCookie]?.value, value.utf8.count <= 8_192,
              let data = Data(base64URLEncoded: value)
        else { return nil }
        return String(data: data, encoding: .utf8)
    }

    // MARK: Adding a passkey

    static let passkeyPasswordForm = ConsolePage.Form.currentPasswordFirst(
        mainId: "passkey-password", formPrefix: "passkey-password", heading: "Add a passkey", action: "/factors/passkey", submitLabel: "Continue"
    )

    private func passkeyPage(_ visit: Visit, options: String, error: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        page("passkeyPage", title: "Add a passkey", visit: visit, status: status) { page in
            page.formError = error
            page.passkey = ConsolePage.Passkey(
                formId: "passkey-create-form", action: "/factors/passkey/register", ceremony: "create", options: options, named: true,
                buttonId: "passkey-create", buttonClass: "", label: "Create the passkey"
            )
        }
    }

    /// The options (security-related: the current password once the privileged window has closed, as for an
    /// authenticator app), rendered into the page that makes the passkey.
    private func startPasskey(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        let current = form["currentPassword"].flatMap { $0.isEmpty ? nil : $0 }
        do {
            let options = try await operations.asSession(session) { try await operations.passkeyRegistrationOptions(currentPassword: current) }
            return passkeyPage(visit, options: options)
        } catch {
            return securedStepRefused(error, asking: Self.passkeyPasswordForm, title: "Add a passkey", passwordGiven: current != nil, visit: visit)
        }
    }

    private func registerPasskey(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        // Unnamed, it is named after the browser that made it, so the list tells passkeys apart.
        let name = form["name"].map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 } ?? visit.browser.map { "Passkey in \($0)" }
        do {
            _ = try await operations.asSession(session) { try await operations.registerPasskey(name: name, credentialJSON: form["credential"] ?? "") }
            return redirect("/factors?done=passkey", visit: visit)
        } catch {
            let problem = consoleProblem(error)
            guard problem.status.code < 500, problem.code != AccountError.Code.unauthenticated else { return factorProblem(error, visit: visit) }
            // Refused (the passkey did not verify, or it is registered already): new options, and why.
            let message = problem.fields.first?.message ?? problem.detail ?? problem.title
            guard let options = try? await operations.asSession(session, { try await operations.passkeyRegistrationOptions() }) else {
                return factorProblem(error, visit: visit)
            }
            return passkeyPage(visit, options: options, error: message, status: problem.status)
        }
    }

    // MARK: Signing in and confirming with a passkey

    private func passkeyLogIn(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        do {
            let device = visit.device ?? Self.randomToken()
            let session = try await operations.asSession(nil, device: device) { try await operations.passkeyLogIn(credentialJSON: form["credential"] ?? "") }
            var response = redirect("/", visit: visit, session: (session.token, session.expiresAt))
            if visit.device == nil { response.setCookie(deviceCookie(device, visit: visit)) }
            return response
        } catch {
            let problem = consoleProblem(error)
            guard problem.status.code < 500 else { return problemPage(problem, visit: visit) }
            return await setupPage(visit, userId: "", error: "That passkey did not sign you in.", notice: nil, status: problem.status)
        }
    }

    private func completeWithPasskey(_ visit: Visit, _ form: ConsoleForm, challenge: String?) async -> Response {
        guard let challenge, (1...256).contains(challenge.utf8.count) else { return redirect("/", visit: visit) }
        do {
            let session = try await operations.asSession(nil, device: visit.device) {
                try await operations.completeSecondFactor(challenge: challenge, passkeyCredentialJSON: form["credential"] ?? "")
            }
            return challengeAnswered(session, visit: visit)
        } catch {
            let problem = consoleProblem(error)
            if problem.code == AccountError.Code.invalidChallenge { return await challengeExpired(visit) }
            guard problem.status.code < 500 else { return problemPage(problem, visit: visit) }
            // The options' challenge may be used up: the code field stays, the passkey again needs a new login.
            return secondFactorPage(visit, challenge: challenge, error: "That passkey was not accepted; enter a code, or log in again.", status: problem.status)
        }
    }

    private func reauthenticateWithPasskey(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        do {
            let fresh = try await operations.asSession(session) { try await operations.reauthenticate(passkeyCredentialJSON: form["credential"] ?? "") }
            return redirect("/factors?done=reauthenticated", visit: visit, session: fresh.map { ($0.token, $0.expiresAt) })
        } catch {
            let problem = consoleProblem(error)
            if problem.code == AccountError.Code.unauthenticated { return redirect("/", visit: visit, session: .some(nil)) }
            guard problem.status.code < 500 else { return problemPage(problem, visit: visit) }
            return await reauthenticatePage(visit, error: "That passkey was not accepted.", status: problem.status)
        }
    }
}

extension Data {
    /// base64url without padding.
    var base64URLEncoded: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    init?(base64URLEncoded text: String) {
        var text = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        self.init(base64Encoded: text)
    }
}

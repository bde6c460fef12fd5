import Foundation
import GatewayService
import HTTPTypes
import Hummingbird
import KontoModel

/// The login's second step: after a correct password of an account with a second factor, a code from the
/// authenticator app or a recovery code. The challenge waits in an HttpOnly, SameSite=Strict cookie of the console's
/// path for its five minutes; the session comes only with a valid code.
extension AccountConsole {
    static let challengeCookie = "konto_challenge"

    static let secondFactorForm = ConsolePage.Form(
        mainId: "second-factor", heading: "Second factor", formId: "second-factor-form", action: "/second-factor",
        submitId: "second-factor-submit", submitLabel: "Continue"
    )

    func challengeCookie(_ token: String, expiresAt: Date, visit: Visit) -> Cookie {
        Cookie(
            name: Self.challengeCookie, value: token, maxAge: max(1, Int(expiresAt.timeIntervalSinceNow)), path: options.basePath,
            secure: visit.secure, httpOnly: true, sameSite: .strict
        )
    }

    func endedChallengeCookie(_ visit: Visit) -> Cookie {
        Cookie(name: Self.challengeCookie, value: "", maxAge: 0, path: options.basePath, secure: visit.secure, httpOnly: true, sameSite: .strict)
    }

    private func codeField(error: String?) -> ConsoleField {
        ConsoleField(name: "code", label: "Code from your authenticator app, or a recovery code", type: "text", error: error, autocomplete: "one-time-code")
    }

    func secondFactorPage(_ visit: Visit, challenge: String?, passkeyOptions: String? = nil, error: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        guard challenge != nil else { return redirect("/", visit: visit) }
        let passkey = passkeyOptions.map {
            ConsolePage.Passkey(formId: "passkey-factor-form", action: "/second-factor/passkey", ceremony: "get", options: $0, buttonId: "passkey-factor", label: "Use a passkey")
        }
        return formPage(Self.secondFactorForm, title: "Second factor", fields: [codeField(error: error)], formError: nil, visit: visit, status: status, passkey: passkey)
    }

    func completeSecondFactor(_ visit: Visit, _ form: ConsoleForm, challenge: String?) async -> Response {
        guard let challenge, (1...256).contains(challenge.utf8.count) else { return redirect("/", visit: visit) }
        let typed = (form["code"] ?? "").trimmingCharacters(in: .whitespaces)
        guard !typed.isEmpty else { return secondFactorPage(visit, challenge: challenge, error: Self.required, status: .unprocessableContent) }
        // Six digits are an app's code; anything else (`xxxx-xxxx-xxxx`) a recovery code.
        let isAppCode = typed.count == 6 && typed.allSatisfy(\.isNumber)
        do {
            let session = try await operations.asSession(nil, device: visit.device) {
                try await operations.completeSecondFactor(challenge: challenge, code: isAppCode ? typed : nil, recoveryCode: isAppCode ? nil : typed)
            }
            return challengeAnswered(session, visit: visit)
        } catch {
            let problem = consoleProblem(error)
            if problem.code == AccountError.Code.invalidChallenge { return await challengeExpired(visit) }
            guard problem.status.code < 500 else { return problemPage(problem, visit: visit) }
            let message = switch problem.code {
            case AccountError.Code.wrongSecondFactor: "The code is wrong, or was used already."
            // A passkey that does not sign in.
            case AccountError.Code.wrongCredentials: "That did not work: try again, or use another way."
            default: problem.detail ?? problem.title
            }
            return secondFactorPage(visit, challenge: challenge, error: message, status: problem.status)
        }
    }

    /// The login's session, and the challenge's cookies gone.
    func challengeAnswered(_ session: GatewayOperations.NewSession, visit: Visit) -> Response {
        var response = redirect("/", visit: visit, session: (session.token, session.expiresAt))
        response.setCookie(endedChallengeCookie(visit))
        response.setCookie(endedChallengeOptionsCookie(visit))
        return response
    }

    /// Too late (or used): the password again, and the challenge's cookies gone.
    func challengeExpired(_ visit: Visit) async -> Response {
        var response = await setupPage(visit, userId: "", error: "Log in again: that took too long, or too many codes were tried.", notice: nil, status: .unauthorized)
        response.setCookie(endedChallengeCookie(visit))
        response.setCookie(endedChallengeOptionsCookie(visit))
        return response
    }
}

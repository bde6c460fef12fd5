import Foundation
import GatewayService
import HTTPTypes
import Hummingbird
import KontoModel

/// The mail the owner may turn off (the notice of sign-ins from new clients); turning it off asks for the current
/// password once the privileged window has shut. The security notices are named as always sent.
extension AccountConsole {
    func registerMail(on router: Router<GatewayRequestContext>) {
        let base = options.basePath
        router.get(RouterPath(base + "/mail")) { request, _ in
            await self.mailPage(self.visit(request), notice: request.uri.queryParameters.get("done") == "saved" ? "Saved." : nil)
        }
        router.post(RouterPath(base + "/mail")) { request, _ in await self.form(request, credentials: true, self.saveMail) }
    }

    func mailPage(_ visit: Visit, notice: String? = nil) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        do {
            let on = try await operations.asSession(session) { try await operations.mailsNewSignIns() }
            return page("mail", title: "Mail from Konto", visit: visit) { page in
                page.notice = notice
                page.mailsNewSignIns = on
            }
        } catch {
            return factorProblem(error, visit: visit)
        }
    }

    /// Asks for the password to turn the notice off (the form carries the choice back).
    static let mailPasswordForm = ConsolePage.Form.currentPasswordFirst(
        mainId: "mail-password", formPrefix: "mail-password", heading: "Stop the sign-in notices", action: "/mail", submitLabel: "Save", token: "off"
    )

    private func saveMail(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        // A checkbox is sent only when ticked; the password's form says "off" itself.
        let on = form["token"] == "off" ? false : form["newSignIn"] == "on"
        let current = form["currentPassword"].flatMap { $0.isEmpty ? nil : $0 }
        do {
            try await operations.asSession(session) { try await operations.setMailsNewSignIns(on, currentPassword: current) }
            return redirect("/mail?done=saved", visit: visit)
        } catch {
            return securedStepRefused(error, asking: Self.mailPasswordForm, title: "Stop the sign-in notices", passwordGiven: current != nil, visit: visit)
        }
    }
}

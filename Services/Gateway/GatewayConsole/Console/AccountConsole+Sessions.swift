import Foundation
import GatewayService
import HTTPTypes
import Hummingbird
import KontoModel

/// Where the account is signed in: each live session with its device and network, ending one, or every other. Ending
/// another session is security-related: the current password is asked for once the privileged window has closed.
extension AccountConsole {
    func registerSessions(on router: Router<GatewayRequestContext>) {
        let base = options.basePath
        router.get(RouterPath(base + "/sessions")) { request, _ in
            let notice: String? = switch request.uri.queryParameters.get("done") {
            case "ended": "Signed out of that device."
            case "others": "Signed out of every other device."
            default: nil
            }
            return await self.sessionsPage(self.visit(request), notice: notice)
        }
        router.post(RouterPath(base + "/sessions/end")) { request, _ in await self.form(request, credentials: true, self.endSession) }
        router.post(RouterPath(base + "/sessions/end-others")) { request, _ in await self.form(request, credentials: true, self.endOtherSessions) }
    }

    func sessionsPage(_ visit: Visit, notice: String? = nil) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        do {
            let sessions = try await operations.asSession(session) { try await operations.deviceSessions() }
            return page("sessions", title: "Where you are signed in", visit: visit) { page in
                page.notice = notice
                page.sessions = sessions.map(Self.row)
                page.hasOtherSessions = sessions.contains { !$0.isCurrent }
            }
        } catch {
            return factorProblem(error, visit: visit)
        }
    }

    static func row(_ session: GatewayOperations.DeviceSession) -> ConsolePage.SessionRow {
        // How it began, as a phrase of its own for each way (a sign-up is no "sign-in with").
        let began = switch session.signInMethod {
        case "password": "signed in with the password"
        case "emailCode": "signed in with a code by mail"
        case "passkey": "signed in with a passkey"
        case "secondFactor": "signed in with a second factor"
        case "signUp": "signed up"
        case "anonymous": "started without an account"
        case let other? where other.hasPrefix("provider:"): "signed in with " + String(other.dropFirst("provider:".count))
        default: "signed in"
        }
        let used = (session.lastUsedAt ?? session.createdAt).formatted(date: .abbreviated, time: .shortened)
        return ConsolePage.SessionRow(
            id: session.id, device: session.clientName.map { BrowserName.from(userAgent: $0) ?? $0 } ?? "Unknown device",
            detail: "\(began) · last used \(used)" + (session.clientAddress.map { " · network \($0)" } ?? ""),
            current: session.isCurrent
        )
    }

    /// Asks for the password to end `sessionId` (the form carries the id back as its token).
    static func endSessionForm(_ sessionId: String) -> ConsolePage.Form {
        .currentPasswordFirst(
            mainId: "end-session-password", formPrefix: "end-session", heading: "Sign out that device", action: "/sessions/end", submitLabel: "Sign out",
            token: sessionId
        )
    }

    static let endOthersForm = ConsolePage.Form.currentPasswordFirst(
        mainId: "end-others-password", formPrefix: "end-others", heading: "Sign out every other device", action: "/sessions/end-others",
        submitLabel: "Sign out everywhere else"
    )

    private func endSession(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        let sessionId = form["sessionId"] ?? form["token"] ?? ""
        let current = form["currentPassword"].flatMap { $0.isEmpty ? nil : $0 }
        // Whether it is this browser's own (then it ends as a logout). Should the list fail, the sessions page after
        // the end finds the session gone and sends the browser to the login all the same.
        let own = (try? await operations.asSession(session) { try await operations.deviceSessions() })?.first { $0.isCurrent }?.id == sessionId
        do {
            try await operations.asSession(session) { try await operations.endSession(id: sessionId, currentPassword: current) }
        } catch {
            return securedStepRefused(error, asking: Self.endSessionForm(sessionId), title: "Sign out that device", passwordGiven: current != nil, visit: visit)
        }
        return own ? redirect("/", visit: visit, session: .some(nil)) : redirect("/sessions?done=ended", visit: visit)
    }

    private func endOtherSessions(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        let current = form["currentPassword"].flatMap { $0.isEmpty ? nil : $0 }
        do {
            _ = try await operations.asSession(session) { try await operations.endOtherSessions(currentPassword: current) }
            return redirect("/sessions?done=others", visit: visit)
        } catch {
            return securedStepRefused(error, asking: Self.endOthersForm, title: "Sign out every other device", passwordGiven: current != nil, visit: visit)
        }
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import KontoModel

/// The pages that change credentials or end the account, which ask for the current password again once the
/// privileged window after a login has closed (SpeziAccount's SecurityRelatedModifier), and the password reset.
extension AccountConsole {
    private static let currentPasswordNeeded = "For your security, enter your current password to confirm this change."
    private static let wrongPassword = "The password is wrong."

    private func currentPasswordField(error: String?) -> ConsoleField {
        ConsoleField(name: "currentPassword", label: "Current password", type: "password", error: error, autocomplete: "current-password")
    }

    private func newPasswordField(value: String, error: String?) -> ConsoleField {
        ConsoleField(name: "newPassword", label: "New password", type: "password", value: value, error: error, autocomplete: "new-password", ruleKey: PasswordKey.identifier)
    }

    // MARK: Password

    func passwordPage(_ visit: Visit, newPassword: String = "", errors: [String: String] = [:], asksCurrent: Bool = false, formError: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        page("password", title: "Change password", visit: visit, status: status) { page in
            page.formError = formError
            page.fields = [newPasswordField(value: newPassword, error: errors["newPassword"])]
            if asksCurrent { page.fields.append(currentPasswordField(error: errors["currentPassword"])) }
        }
    }

    func changePassword(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        let newPassword = form["newPassword"] ?? ""
        let current = form["currentPassword"].flatMap { $0.isEmpty ? nil : $0 }
        guard !newPassword.isEmpty else {
            return passwordPage(visit, errors: ["newPassword": "This field is required."], asksCurrent: form["currentPassword"] != nil, status: .unprocessableContent)
        }
        do {
            _ = try await asSession(session) {
                try await api.changePassword(.init(body: .json(.init(currentPassword: current, newPassword: newPassword))))
            }
            return redirect("/?done=password", visit: visit)
        } catch {
            let problem = consoleProblem(error)
            if problem.status == .unauthorized, current == nil { return redirect("/", visit: visit, session: .some(nil)) }
            guard problem.status.code < 500 else { return problemPage(problem, visit: visit) }
            switch problem.code {
            case AccountError.Code.reauthenticationRequired.rawValue:
                return passwordPage(visit, newPassword: newPassword, asksCurrent: true, formError: Self.currentPasswordNeeded, status: problem.status)
            case AccountError.Code.wrongCredentials.rawValue:
                return passwordPage(visit, newPassword: newPassword, errors: ["currentPassword": Self.wrongPassword], asksCurrent: true, status: problem.status)
            default:
                var errors: [String: String] = [:]
                if let message = problem.fields.first(where: { $0.key == PasswordKey.identifier })?.message { errors["newPassword"] = message }
                return passwordPage(visit, newPassword: newPassword, errors: errors, asksCurrent: current != nil, formError: errors.isEmpty ? problem.detail : nil, status: problem.status)
            }
        }
    }

    // MARK: User identifier

    private var userIdIsEmail: Bool { schema.configuration.userIdType == .emailAddress }

    func userIdPage(_ visit: Visit, userId: String = "", errors: [String: String] = [:], asksCurrent: Bool = false, formError: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        page("userId", title: "Change user identifier", visit: visit, status: status) { page in
            page.formError = formError
            page.fields = [
                ConsoleField(
                    name: "userId", label: userIdIsEmail ? "New email address" : "New username", type: userIdIsEmail ? "email" : "text",
                    value: userId, error: errors["userId"], autocomplete: "username", ruleKey: UserIdKey.identifier
                ),
            ]
            if asksCurrent { page.fields.append(currentPasswordField(error: errors["currentPassword"])) }
        }
    }

    func changeUserId(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        let userId = form["userId"] ?? ""
        let current = form["currentPassword"].flatMap { $0.isEmpty ? nil : $0 }
        guard !userId.isEmpty else {
            return userIdPage(visit, errors: ["userId": "This field is required."], asksCurrent: form["currentPassword"] != nil, status: .unprocessableContent)
        }
        do {
            _ = try await asSession(session) { try await api.changeUserId(.init(body: .json(.init(userId: userId, currentPassword: current)))) }
            return redirect("/?done=userId", visit: visit)
        } catch {
            let problem = consoleProblem(error)
            if problem.status == .unauthorized, current == nil { return redirect("/", visit: visit, session: .some(nil)) }
            guard problem.status.code < 500 else { return problemPage(problem, visit: visit) }
            switch problem.code {
            case AccountError.Code.reauthenticationRequired.rawValue:
                return userIdPage(visit, userId: userId, asksCurrent: true, formError: Self.currentPasswordNeeded, status: problem.status)
            case AccountError.Code.wrongCredentials.rawValue:
                return userIdPage(visit, userId: userId, errors: ["currentPassword": Self.wrongPassword], asksCurrent: true, status: problem.status)
            case AccountError.Code.credentialsTaken.rawValue:
                return userIdPage(visit, userId: userId, errors: ["userId": problem.detail ?? problem.title], asksCurrent: current != nil, status: problem.status)
            default:
                var errors: [String: String] = [:]
                if let message = problem.fields.first(where: { $0.key == UserIdKey.identifier })?.message { errors["userId"] = message }
                return userIdPage(visit, userId: userId, errors: errors, asksCurrent: current != nil, formError: errors.isEmpty ? problem.detail : nil, status: problem.status)
            }
        }
    }

    // MARK: Delete

    func deletePage(_ visit: Visit, confirmed: Bool = false, errors: [String: String] = [:], formError: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        page("delete", title: "Delete account", visit: visit, status: status) { page in
            page.formError = formError
            page.fields = [
                ConsoleField(name: "confirm", label: "I understand that my account and its details are deleted for good.", type: "checkbox", value: confirmed ? "true" : "", error: errors["confirm"]),
                currentPasswordField(error: errors["currentPassword"]),
            ]
        }
    }

    func delete(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        let confirmed = form["confirm"] == "true"
        let password = form["currentPassword"] ?? ""
        var errors: [String: String] = [:]
        if !confirmed { errors["confirm"] = "Confirm that you want to delete your account." }
        if password.isEmpty { errors["currentPassword"] = "This field is required." }
        guard errors.isEmpty else { return deletePage(visit, confirmed: confirmed, errors: errors, status: .unprocessableContent) }
        do {
            // Always asked here: a deletion cannot be undone, whatever the privileged window says.
            _ = try await asSession(session) { try await api.reauthenticate(.init(body: .json(.init(password: password)))) }
        } catch {
            let problem = consoleProblem(error)
            if problem.code == AccountError.Code.wrongCredentials.rawValue {
                return deletePage(visit, confirmed: confirmed, errors: ["currentPassword": Self.wrongPassword], status: problem.status)
            }
            if problem.status == .unauthorized { return redirect("/", visit: visit, session: .some(nil)) }
            return problem.status.code < 500
                ? deletePage(visit, confirmed: confirmed, formError: problem.detail ?? problem.title, status: problem.status)
                : problemPage(problem, visit: visit)
        }
        do {
            _ = try await asSession(session) { try await api.deleteAccount(.init()) }
        } catch {
            return problemPage(consoleProblem(error), visit: visit)
        }
        var response = page("deleted", title: "Account deleted", visit: visit)
        response.setCookie(Cookie(name: Self.sessionCookie, value: "", maxAge: 0, path: options.basePath, secure: visit.secure, httpOnly: true, sameSite: .lax))
        return response
    }

    // MARK: Password reset

    func resetRequestPage(_ visit: Visit, userId: String = "", errors: [String: String] = [:], formError: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        page("resetRequest", title: "Reset your password", visit: visit, status: status) { page in
            page.formError = formError
            page.fields = [
                ConsoleField(
                    name: "userId", label: userIdIsEmail ? "Email address" : "Username", type: userIdIsEmail ? "email" : "text",
                    value: userId, error: errors["userId"], autocomplete: "username"
                ),
            ]
        }
    }

    func requestReset(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        let userId = form["userId"] ?? ""
        guard !userId.isEmpty else {
            return resetRequestPage(visit, errors: ["userId": "This field is required."], status: .unprocessableContent)
        }
        do {
            _ = try await asSession(nil) { try await api.requestPasswordReset(.init(body: .json(.init(userId: userId)))) }
        } catch {
            // Identity answers alike for known and unknown users; what is left is throttling or an outage.
            let problem = consoleProblem(error)
            return problem.status.code < 500
                ? resetRequestPage(visit, userId: userId, formError: problem.detail ?? problem.title, status: problem.status)
                : problemPage(problem, visit: visit)
        }
        return page("resetRequested", title: "Check your messages", visit: visit)
    }

    func resetConfirmPage(_ visit: Visit, token: String, newPassword: String = "", errors: [String: String] = [:], formError: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        page("resetConfirm", title: "Choose a new password", visit: visit, status: status) { page in
            page.formError = formError ?? (token.isEmpty ? "This page needs the link from your message; request a new one if it is lost." : nil)
            // Bounded like a bearer token; a longer one is no token of ours.
            page.token = token.utf8.count <= 512 ? token : ""
            page.fields = [newPasswordField(value: newPassword, error: errors["newPassword"])]
        }
    }

    func confirmReset(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        let token = form["token"] ?? ""
        let newPassword = form["newPassword"] ?? ""
        guard !newPassword.isEmpty else {
            return resetConfirmPage(visit, token: token, errors: ["newPassword": "This field is required."], status: .unprocessableContent)
        }
        do {
            _ = try await asSession(nil) { try await api.confirmPasswordReset(.init(body: .json(.init(token: token, newPassword: newPassword)))) }
        } catch {
            let problem = consoleProblem(error)
            guard problem.status.code < 500 else { return problemPage(problem, visit: visit) }
            var errors: [String: String] = [:]
            if let message = problem.fields.first(where: { $0.key == PasswordKey.identifier })?.message { errors["newPassword"] = message }
            return resetConfirmPage(visit, token: token, newPassword: newPassword, errors: errors, formError: errors.isEmpty ? (problem.detail ?? problem.title) : nil, status: problem.status)
        }
        // Every session of the account ended, this browser's too.
        var response = page("resetDone", title: "Password changed", visit: visit)
        response.setCookie(Cookie(name: Self.sessionCookie, value: "", maxAge: 0, path: options.basePath, secure: visit.secure, httpOnly: true, sameSite: .lax))
        return response
    }
}

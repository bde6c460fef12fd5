import GatewayService
import Foundation
import HTTPTypes
import Hummingbird
import KontoContracts
import KontoModel

/// The pages that change credentials or end the account, which ask for the current password again once the
/// privileged window after a login has closed (SpeziAccount's SecurityRelatedModifier), and the password reset.
extension AccountConsole {
    private static let currentPasswordNeeded = "For your security, enter your current password to confirm this change."
    private static let wrongPassword = "The password is wrong."

    private var userIdIsEmail: Bool { schema.configuration.userIdType == .emailAddress }

    private func currentPasswordField(error: String?) -> ConsoleField {
        ConsoleField(name: "currentPassword", label: "Current password", type: "password", error: error, autocomplete: "current-password")
    }

    private func newPasswordField(value: String, error: String?) -> ConsoleField {
        ConsoleField(name: "newPassword", label: "New password", type: "password", value: value, error: error, autocomplete: "new-password", ruleKey: PasswordKey.identifier)
    }

    /// The userId as the login and reset forms ask for it.
    func userIdField(id: String? = nil, value: String, error: String?) -> ConsoleField {
        ConsoleField(
            name: "userId", id: id, label: ConsoleField.userIdLabel(schema.configuration.userIdType), type: userIdIsEmail ? "email" : "text",
            value: value, error: error, autocomplete: "username"
        )
    }

    private func newUserIdField(value: String, error: String?) -> ConsoleField {
        ConsoleField(
            name: "userId", label: userIdIsEmail ? "New email address" : "New username", type: userIdIsEmail ? "email" : "text",
            value: value, error: error, autocomplete: "username", ruleKey: UserIdKey.identifier
        )
    }

    /// A page of one form (``ConsoleTemplates/form``).
    func formPage(
        _ form: ConsolePage.Form,
        title: String,
        fields: [ConsoleField],
        formError: String?,
        visit: Visit,
        status: HTTPResponse.Status,
        passkey: ConsolePage.Passkey? = nil
    ) -> Response {
        page("form", title: title, visit: visit, status: status) { page in
            page.form = form
            page.fields = fields
            page.formError = formError
            page.passkey = passkey
        }
    }

    func donePage(_ done: ConsolePage.Done, visit: Visit, endsSession: Bool) -> Response {
        var response = page("done", title: done.heading, visit: visit) { $0.done = done }
        if endsSession { response.setCookie(endedSessionCookie(visit)) }
        return response
    }

    // MARK: Password and user identifier

    /// A security-related change: one new value, and the current password once the services ask for it.
    struct SecurityChange: Sendable {
        var form: ConsolePage.Form
        /// The form's input for the new value, and the schema key whose field errors belong to it.
        var input: String
        var key: String
        var field: @Sendable (_ value: String, _ error: String?) -> ConsoleField
        var done: String
        var change: @Sendable (_ value: String, _ currentPassword: String?) async throws -> Void
    }

    var passwordChange: SecurityChange {
        SecurityChange(
            form: .init(mainId: "password", heading: "Change password", formId: "password-form", action: "/password", submitId: "password-submit", submitLabel: "Change password"),
            input: "newPassword", key: PasswordKey.identifier, field: { newPasswordField(value: $0, error: $1) }, done: "password"
        ) { value, current in
            try await operations.changePassword(to: value, currentPassword: current)
        }
    }

    var userIdChange: SecurityChange {
        SecurityChange(
            form: .init(mainId: "user-id", heading: "Change your \(userIdNoun)", formId: "userid-form", action: "/user-id", submitId: "userid-submit", submitLabel: "Change"),
            input: "userId", key: UserIdKey.identifier, field: { newUserIdField(value: $0, error: $1) }, done: "userId"
        ) { value, current in
            try await operations.changeUserId(to: value, currentPassword: current)
        }
    }

    func securityPage(_ change: SecurityChange, _ visit: Visit, value: String = "", errors: [String: String] = [:], asksCurrent: Bool = false, formError: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        var fields = [change.field(value, errors[change.input])]
        if asksCurrent { fields.append(currentPasswordField(error: errors["currentPassword"])) }
        return formPage(change.form, title: change.form.heading, fields: fields, formError: formError, visit: visit, status: status)
    }

    func securityChange(_ change: SecurityChange, _ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        let value = form[change.input] ?? ""
        let asked = form["currentPassword"] != nil
        let current = form["currentPassword"].flatMap { $0.isEmpty ? nil : $0 }
        guard !value.isEmpty else {
            return securityPage(change, visit, errors: [change.input: Self.required], asksCurrent: asked, status: .unprocessableContent)
        }
        do {
            try await operations.asSession(session) { try await change.change(value, current) }
            return redirect("/?done=\(change.done)", visit: visit)
        } catch {
            let problem = consoleProblem(error)
            if problem.status == .unauthorized, current == nil { return redirect("/", visit: visit, session: .some(nil)) }
            guard problem.status.code < 500 else { return problemPage(problem, visit: visit) }
            switch problem.code {
            case AccountError.Code.reauthenticationRequired:
                return securityPage(change, visit, value: value, asksCurrent: true, formError: Self.currentPasswordNeeded, status: problem.status)
            case AccountError.Code.wrongCredentials:
                return securityPage(change, visit, value: value, errors: ["currentPassword": Self.wrongPassword], asksCurrent: true, status: problem.status)
            case AccountError.Code.credentialsTaken:
                return securityPage(change, visit, value: value, errors: [change.input: problem.detail ?? problem.title], asksCurrent: asked, status: problem.status)
            default:
                var errors: [String: String] = [:]
                if let message = problem.fields.first(where: { $0.key == change.key })?.message { errors[change.input] = message }
                return securityPage(change, visit, value: value, errors: errors, asksCurrent: asked, formError: errors.isEmpty ? problem.detail : nil, status: problem.status)
            }
        }
    }

    // MARK: Delete

    func deletePage(_ visit: Visit, confirmed: Bool = false, errors: [String: String] = [:], formError: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        formPage(
            .init(
                mainId: "delete", heading: "Delete account",
                intro: "Deleting your account removes its details and credentials for good and ends every session.",
                formId: "delete-form", action: "/delete", submitId: "delete-submit", submitLabel: "Delete my account", danger: true
            ),
            title: "Delete account",
            fields: [
                ConsoleField(name: "confirm", label: "I understand that my account and its details are deleted for good.", type: "checkbox", value: confirmed ? "true" : "", error: errors["confirm"]),
                currentPasswordField(error: errors["currentPassword"]),
            ],
            formError: formError, visit: visit, status: status
        )
    }

    func delete(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        guard let session = visit.session else { return redirect("/", visit: visit) }
        let confirmed = form["confirm"] == "true"
        let password = form["currentPassword"] ?? ""
        var errors: [String: String] = [:]
        if !confirmed { errors["confirm"] = "Confirm that you want to delete your account." }
        if password.isEmpty { errors["currentPassword"] = Self.required }
        guard errors.isEmpty else { return deletePage(visit, confirmed: confirmed, errors: errors, status: .unprocessableContent) }
        do {
            // Always asked here and checked with the deletion itself: it cannot be undone, whatever the privileged
            // window says (a reauthentication first could see the window close before the deletion).
            try await operations.asSession(session) { try await operations.deleteAccount(currentPassword: password) }
        } catch {
            let problem = consoleProblem(error)
            if problem.code == AccountError.Code.wrongCredentials {
                return deletePage(visit, confirmed: confirmed, errors: ["currentPassword": Self.wrongPassword], status: problem.status)
            }
            if problem.status == .unauthorized { return redirect("/", visit: visit, session: .some(nil)) }
            return problem.status.code < 500
                ? deletePage(visit, confirmed: confirmed, formError: problem.detail ?? problem.title, status: problem.status)
                : problemPage(problem, visit: visit)
        }
        return donePage(
            .init(mainId: "deleted", heading: "Account deleted", text: "Your account and its details are gone.", linkId: "signup-link", linkPath: "/signup", linkLabel: "Sign up again"),
            visit: visit, endsSession: true
        )
    }

    // MARK: Password reset

    func resetRequestPage(_ visit: Visit, userId: String = "", errors: [String: String] = [:], formError: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        formPage(
            .init(
                mainId: "reset", heading: "Reset your password",
                intro: "Enter your \(userIdNoun); if an account has it, a link to set a new password is sent.",
                formId: "reset-request-form", action: "/reset", submitId: "reset-request-submit", submitLabel: "Send the link",
                cancels: false, backToLogin: true
            ),
            title: "Reset your password",
            fields: [userIdField(value: userId, error: errors["userId"])],
            formError: formError, visit: visit, status: status
        )
    }

    func requestReset(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        let userId = form["userId"] ?? ""
        guard !userId.isEmpty else {
            return resetRequestPage(visit, errors: ["userId": Self.required], status: .unprocessableContent)
        }
        do {
            try await operations.asSession(nil, device: visit.device) { try await operations.requestPasswordReset(userId: userId) }
        } catch {
            // Identity answers alike for known and unknown users; what is left is throttling or an outage.
            let problem = consoleProblem(error)
            return problem.status.code < 500
                ? resetRequestPage(visit, userId: userId, formError: problem.detail ?? problem.title, status: problem.status)
                : problemPage(problem, visit: visit)
        }
        return donePage(
            .init(
                mainId: "reset-requested", heading: "Check your messages",
                text: mailSent("If an account has this \(userIdNoun), a link to reset its password is on its way."),
                linkId: "login-link", linkPath: "/", linkLabel: "Back to log in"
            ),
            visit: visit, endsSession: false
        )
    }

    func resetConfirmPage(_ visit: Visit, token: String, newPassword: String = "", errors: [String: String] = [:], formError: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        // Bounded like a bearer token; a longer one is no token of ours.
        let token = token.utf8.count <= 512 ? token : ""
        return formPage(
            .init(
                mainId: "reset-confirm", heading: "Choose a new password", formId: "reset-confirm-form", action: "/reset/confirm",
                submitId: "reset-confirm-submit", submitLabel: "Set password", cancels: false, hasToken: true, token: token
            ),
            title: "Choose a new password",
            fields: [newPasswordField(value: newPassword, error: errors["newPassword"])],
            formError: formError ?? (token.isEmpty ? "This page needs the link from your message; request a new one if it is lost." : nil),
            visit: visit, status: status
        )
    }

    func confirmReset(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        let token = form["token"] ?? ""
        let newPassword = form["newPassword"] ?? ""
        guard !newPassword.isEmpty else {
            return resetConfirmPage(visit, token: token, errors: ["newPassword": Self.required], status: .unprocessableContent)
        }
        do {
            try await operations.asSession(nil) { try await operations.confirmPasswordReset(token: token, newPassword: newPassword) }
        } catch {
            let problem = consoleProblem(error)
            guard problem.status.code < 500 else { return problemPage(problem, visit: visit) }
            var errors: [String: String] = [:]
            if let message = problem.fields.first(where: { $0.key == PasswordKey.identifier })?.message { errors["newPassword"] = message }
            return resetConfirmPage(visit, token: token, newPassword: newPassword, errors: errors, formError: errors.isEmpty ? (problem.detail ?? problem.title) : nil, status: problem.status)
        }
        // Every session of the account ended, this browser's too.
        return donePage(
            .init(
                mainId: "reset-done", heading: "Password changed", text: "Your password is set and every session of your account has ended.",
                linkId: "login-link", linkPath: "/", linkLabel: "Log in"
            ),
            visit: visit, endsSession: true
        )
    }
}

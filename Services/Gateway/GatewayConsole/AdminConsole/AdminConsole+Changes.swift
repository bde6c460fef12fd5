import Foundation
import GatewayService
import HTTPTypes
import Hummingbird
import KontoModel

/// The admin console's forms that make and change: a new account, an import, an account's change, webhook endpoints.
extension AdminConsole {
    func registerChanges(on router: Router<GatewayRequestContext>) {
        let base = Self.basePath
        router.get(RouterPath(base + "/accounts/new")) { request, _ in
            await self.signedIn(request) { visit, _ in self.accountFormPage(visit, Self.newAccountForm) }
        }
        router.post(RouterPath(base + "/accounts/new")) { request, _ in await self.form(request) { visit, form, _ in try await self.create(form, visit) } }
        router.get(RouterPath(base + "/accounts/:account/edit")) { request, context in
            let accountId = context.parameters.get("account") ?? ""
            return await self.signedIn(request) { visit, _ in try await self.editPage(accountId, visit) }
        }
        router.post(RouterPath(base + "/accounts/:account/edit")) { request, context in
            let accountId = context.parameters.get("account") ?? ""
            return await self.form(request) { visit, form, _ in try await self.change(accountId, form, visit) }
        }
        router.get(RouterPath(base + "/import")) { request, _ in
            await self.signedIn(request) { visit, _ in self.page("adminImport", title: "Import accounts", visit: visit) }
        }
        router.post(RouterPath(base + "/import")) { request, _ in await self.form(request) { visit, form, _ in try await self.importAccounts(form, visit) } }
        router.get(RouterPath(base + "/webhooks")) { request, _ in await self.signedIn(request) { visit, _ in try await self.webhooksPage(visit) } }
        router.post(RouterPath(base + "/webhooks/add")) { request, _ in await self.form(request) { visit, form, _ in try await self.addWebhook(form, visit) } }
        router.post(RouterPath(base + "/webhooks/remove")) { request, _ in
            await self.form(request) { visit, form, _ in
                let name = form["name"] ?? ""
                let dropped = try await self.operations.removeWebhook(name: name)
                return try await self.webhooksPage(visit, notice: "Removed \(name) (\(dropped) deliveries dropped).")
            }
        }
        registerClients(on: router)
    }

    static let newAccountForm = AdminConsolePage.AccountForm(
        action: "/accounts/new", accountId: nil, userId: "", details: "", remove: "", verified: false, version: "", new: true
    )

    func accountFormPage(
        _ visit: Visit, _ form: AdminConsolePage.AccountForm, formError: String? = nil, status: HTTPResponse.Status = .ok
    ) -> Response {
        page("adminAccountForm", title: form.new ? "New account" : "Change \(form.userId)", visit: visit, status: status) { page in
            page.accountForm = form
            page.formError = formError
        }
    }

    /// A refused form again, its values kept (never a password), with what the API said, field by field.
    func refusedForm(_ error: any Error, _ visit: Visit, _ form: AdminConsolePage.AccountForm) -> Response {
        let problem = operations.problem(for: error)
        if problem.code == .adminKeyRefused { return refusal(problem, visit: visit) }
        let fields = problem.fields.map { "\($0.key): \($0.message)" }
        return accountFormPage(visit, form, formError: ([Self.message(for: problem)] + fields).joined(separator: " "), status: problem.status)
    }

    func create(_ form: ConsoleForm, _ visit: Visit) async throws -> Response {
        var values = Self.newAccountForm
        values.userId = form["userId"] ?? ""
        values.details = form["details"] ?? ""
        values.verified = form["verified"] == "true"
        let password = (form["password"] ?? "").isEmpty ? nil : form["password"]
        do {
            let made = try await operations.createAccount(userId: values.userId, password: password, details: values.details, verified: values.verified)
            return redirect("/accounts/\(Self.pathComponent(made.accountId))?done=created", visit: visit)
        } catch {
            return refusedForm(error, visit, values)
        }
    }

    func editPage(_ accountId: String, _ visit: Visit) async throws -> Response {
        let account = try await operations.account(accountId)
        return accountFormPage(visit, AdminConsolePage.AccountForm(
            action: "/accounts/\(Self.pathComponent(accountId))/edit", accountId: accountId,
            userId: account.details.first { $0.key == "userId" }?.value ?? "", details: "", remove: "", verified: false,
            version: String(account.version), new: false
        ))
    }

    func change(_ accountId: String, _ form: ConsoleForm, _ visit: Visit) async throws -> Response {
        let current = try await operations.account(accountId)
        let currentUserId = current.details.first { $0.key == "userId" }?.value ?? ""
        let values = AdminConsolePage.AccountForm(
            action: "/accounts/\(Self.pathComponent(accountId))/edit", accountId: accountId, userId: form["userId"] ?? currentUserId,
            details: form["details"] ?? "", remove: form["remove"] ?? "", verified: form["verified"] == "true", version: form["version"] ?? "", new: false
        )
        let remove = values.remove.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        do {
            _ = try await operations.updateAccount(
                accountId, userId: values.userId == currentUserId || values.userId.isEmpty ? nil : values.userId, verified: values.verified,
                set: values.details, remove: remove, version: Int64(values.version)
            )
            return redirect("/accounts/\(Self.pathComponent(accountId))?done=changed", visit: visit)
        } catch {
            return refusedForm(error, visit, values)
        }
    }

    func importAccounts(_ form: ConsoleForm, _ visit: Visit) async throws -> Response {
        let ndjson = form["ndjson"] ?? ""
        do {
            let report = try await operations.importAccounts(ndjson)
            return page("adminImport", title: "Import accounts", visit: visit) { page in
                page.notice = "\(report.created) made, \(report.failed) refused."
                page.importReport = AdminConsolePage.ImportReport(
                    created: report.created, failed: report.failed,
                    lines: report.lines.map { AdminConsolePage.ImportRow(line: $0.line, accountId: $0.accountId, problem: $0.problem) }
                )
            }
        } catch {
            let problem = operations.problem(for: error)
            if problem.code == .adminKeyRefused { return refusal(problem, visit: visit) }
            return page("adminImport", title: "Import accounts", visit: visit, status: problem.status) { page in
                page.ndjson = ndjson
                page.formError = Self.message(for: problem)
            }
        }
    }

    func webhooksPage(_ visit: Visit, notice: String? = nil, madeSecret: String? = nil, formError: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        let webhooks = try await operations.webhooks()
        return page("adminWebhooks", title: "Webhook endpoints", visit: visit, status: status) { page in
            page.notice = notice
            page.madeSecret = madeSecret
            page.formError = formError
            page.webhooks = webhooks.map {
                AdminConsolePage.WebhookRow(
                    name: $0.name, url: $0.url, types: $0.types?.joined(separator: ", ") ?? "every type", fromFile: $0.source == "file",
                    deliversResetTokens: $0.deliversResetTokens
                )
            }
            page.hasWebhooks = !webhooks.isEmpty
        }
    }

    func addWebhook(_ form: ConsoleForm, _ visit: Visit) async throws -> Response {
        let name = form["name"] ?? ""
        let types = (form["types"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let secret = (form["secret"] ?? "").isEmpty ? nil : form["secret"]
        do {
            let added = try await operations.addWebhook(name: name, url: form["url"] ?? "", types: types.isEmpty ? nil : types, secret: secret)
            return try await webhooksPage(
                visit, notice: "Added \(added.webhook.name)." + (added.secret == nil ? "" : " Its signing secret is below, shown this once: give it to the receiver."),
                madeSecret: added.secret
            )
        } catch {
            let problem = operations.problem(for: error)
            if problem.code == .adminKeyRefused { return refusal(problem, visit: visit) }
            return try await webhooksPage(visit, formError: Self.message(for: problem), status: problem.status)
        }
    }
}

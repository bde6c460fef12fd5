import Foundation
import GatewayService
import HTTPTypes
import Hummingbird
import KontoModel

extension AdminConsole {
    // MARK: Signing in

    func home(_ request: Request) -> Response {
        let visit = visit(request)
        if visit.session != nil { return redirect("/accounts", visit: visit) }
        let ended = request.uri.queryParameters.get("ended") != nil
        return page("adminSignIn", title: "Sign in", visit: visit) { page in
            if ended { page.notice = "Your key was refused (revoked or expired): sign in with another." }
        }
    }

    /// Checks the key with Identity (rate-limited and audited as `console.signIn`) and keeps it in the sealed cookie.
    func signIn(_ visit: Visit, _ form: ConsoleForm) async -> Response {
        let key = (form["key"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        do {
            let who = try await operations.asOperator(key) { try await operations.whoAmI(action: "console.signIn") }
            let session = Session(
                key: key, keyId: who.keyId, name: who.name, scopes: who.scopes, expires: Int64(Date().timeIntervalSince1970) + Int64(Self.sessionSeconds)
            )
            return redirect("/accounts", visit: visit, session: .some(session))
        } catch {
            let problem = operations.problem(for: error)
            return page("adminSignIn", title: "Sign in", visit: visit, status: problem.status) { page in
                page.formError = problem.code == .adminKeyRefused ? "That key is not a valid operator key." : Self.message(for: problem)
            }
        }
    }

    // MARK: Accounts

    func search(_ request: Request, _ visit: Visit, _ key: String) async throws -> Response {
        let query = request.uri.queryParameters.get("q").map { String($0.prefix(320)) } ?? ""
        let onlyDisabled = request.uri.queryParameters.get("disabled") == "true"
        let cursor = request.uri.queryParameters.get("cursor").map { String($0.prefix(200)) }
        let found = try await operations.searchAccounts(
            contains: query.isEmpty ? nil : query, disabled: onlyDisabled ? true : nil, cursor: cursor, limit: 50
        )
        return page("adminAccounts", title: "Accounts", visit: visit) { page in
            page.query = query
            page.onlyDisabled = onlyDisabled
            page.accounts = found.accounts.map {
                AdminConsolePage.AccountRow(
                    id: $0.accountId, userId: $0.userId ?? "(anonymous)", created: Self.date($0.createdAt), verified: $0.verified, disabled: $0.disabled,
                    anonymous: $0.anonymous
                )
            }
            page.hasAccounts = !found.accounts.isEmpty
            page.total = "\(found.totalIsExact ? "" : "about ")\(found.totalEstimate) found"
            page.nextPage = found.nextCursor.map { next in
                var parameters = [("cursor", next)]
                if !query.isEmpty { parameters.append(("q", query)) }
                if onlyDisabled { parameters.append(("disabled", "true")) }
                return "/accounts?" + Self.query(parameters)
            }
        }
    }

    /// An account's page; `done`: the action just performed, said at the top; `formError`: a refused form's message.
    func accountPage(
        _ accountId: String, _ visit: Visit, _ key: String, done: AccountAction? = nil, formError: String? = nil, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let account = try await operations.account(accountId)
        // The audit trail needs its own scope: asked for only with it (a refused call would be an entry of its own).
        let sessions = try await operations.sessions(accountId)
        let audit = visit.session?.scopes.contains("audit:read") == true
            ? try await operations.audit(accountId: accountId, type: nil, cursor: nil, limit: 20) : nil
        let userId = account.details.first { $0.key == "userId" }?.value
        return page("adminAccount", title: userId ?? accountId, visit: visit, status: status) { page in
            page.notice = done?.done
            page.formError = formError
            page.account = AdminConsolePage.Account(
                id: account.accountId, userId: userId ?? "(anonymous)", version: String(account.version),
                details: account.details.filter { $0.key != "userId" && $0.key != "accountId" }.map { AdminConsolePage.Pair(key: $0.key, value: $0.value) },
                created: Self.date(account.createdAt), lastSignIn: account.lastSignInAt.map(Self.date), verified: account.verifiedAt.map(Self.date),
                disabled: account.disabledAt.map(Self.date), hasPassword: account.hasPassword,
                factors: account.factors.map { AdminConsolePage.Factor(id: $0.id, kind: $0.kind, name: $0.name, created: Self.date($0.createdAt)) },
                identities: account.identities.map {
                    AdminConsolePage.Identity(id: $0.id, provider: $0.provider, created: Self.date($0.createdAt), lastUsed: $0.lastUsedAt.map(Self.date))
                },
                sessions: sessions.map {
                    AdminConsolePage.Session(
                        id: $0.id, created: Self.date($0.createdAt), expires: Self.date(min($0.idleExpiresAt, $0.absoluteExpiresAt)), level: $0.assuranceLevel,
                        lastUsed: Self.date($0.lastUsedAt ?? $0.createdAt),
                        client: [$0.signInMethod, $0.clientAddress, $0.clientName].compactMap { $0 }.joined(separator: " · ")
                    )
                },
                sessionCount: account.sessionCount
            )
            if let audit {
                page.audit = audit.entries.map(Self.auditRow)
                page.hasAudit = !audit.entries.isEmpty
            }
        }
    }

    /// What an account's page does, each a form posting to `…/accounts/{id}/<action>`.
    enum AccountAction: String, Sendable {
        case disable, enable
        case passwordReset = "password-reset"
        case endSessions = "end-sessions"
        case endSession = "end-session"
        case removeFactor = "remove-factor"
        case unlinkIdentity = "unlink-identity"
        case delete
        // Said after the forms of AdminConsole+Changes.
        case created, changed

        /// The actions posted to `…/accounts/{id}/<action>` (the others have pages of their own).
        static let posted: [AccountAction] = [.disable, .enable, .passwordReset, .endSessions, .endSession, .removeFactor, .unlinkIdentity, .delete]

        /// Said on the account's page afterwards.
        var done: String {
            switch self {
            case .created: "The account is made."
            case .changed: "The account is changed."
            case .disable: "The account is disabled: its sessions ended, and it cannot sign in until it is enabled."
            case .enable: "The account is enabled."
            case .passwordReset: "A password reset link is on its way to the account's address."
            case .endSessions: "Every session of the account has ended."
            case .endSession: "The session has ended."
            case .removeFactor: "The second factor is removed; the owner is told by mail."
            case .unlinkIdentity: "The identity is unlinked."
            case .delete: "The account is deleted."
            }
        }
    }

    func perform(_ action: AccountAction, accountId: String, form: ConsoleForm, _ visit: Visit, _ key: String) async throws -> Response {
        switch action {
        case .disable: try await operations.disable(accountId)
        case .enable: try await operations.enable(accountId)
        case .passwordReset: try await operations.sendPasswordReset(accountId)
        case .endSessions: _ = try await operations.endSessions(accountId)
        case .endSession: try await operations.endSession(accountId, sessionId: form["session"] ?? "")
        case .removeFactor: try await operations.removeFactor(accountId, factorId: form["factor"] ?? "")
        case .unlinkIdentity: try await operations.unlinkIdentity(accountId, identityId: form["identity"] ?? "")
        case .created, .changed:
            break
        case .delete:
            // Nothing to undo: the form asks for the account's id typed again.
            guard form["confirm"] == accountId else {
                return try await accountPage(accountId, visit, key, formError: "Type the account's id to confirm its deletion.", status: .unprocessableContent)
            }
            try await operations.delete(accountId)
            return page("adminDone", title: "Deleted", visit: visit) { $0.notice = action.done }
        }
        return redirect("/accounts/\(Self.pathComponent(accountId))?done=\(action.rawValue)", visit: visit)
    }

    // MARK: Audit and deliveries

    func auditPage(_ request: Request, _ visit: Visit, _ key: String) async throws -> Response {
        let type = request.uri.queryParameters.get("type").map { String($0.prefix(200)) } ?? ""
        let account = request.uri.queryParameters.get("account").map { String($0.prefix(200)) } ?? ""
        let cursor = request.uri.queryParameters.get("cursor").map { String($0.prefix(200)) }
        let found = try await operations.audit(accountId: account.isEmpty ? nil : account, type: type.isEmpty ? nil : type, cursor: cursor, limit: 100)
        return page("adminAudit", title: "Audit log", visit: visit) { page in
            page.auditType = type
            page.auditAccount = account
            page.audit = found.entries.map(Self.auditRow)
            page.hasAudit = !found.entries.isEmpty
            page.auditNext = found.nextCursor.map { next in
                var parameters = [("cursor", next)]
                if !type.isEmpty { parameters.append(("type", type)) }
                if !account.isEmpty { parameters.append(("account", account)) }
                return "/audit?" + Self.query(parameters)
            }
        }
    }

    func deliveriesPage(_ request: Request, _ visit: Visit, _ key: String) async throws -> Response {
        let group = request.uri.queryParameters.get("group").map { String($0.prefix(128)) } ?? ""
        let found = group.isEmpty ? [] : try await operations.failedDeliveries(group: group)
        return page("adminDeliveries", title: "Failed deliveries", visit: visit) { page in
            page.group = group
            page.listedGroup = !group.isEmpty
            page.notice = request.uri.queryParameters.get("redelivered").map { "\($0) queued again." }
            page.deliveries = found.map {
                AdminConsolePage.Delivery(
                    eventId: $0.eventId, type: $0.type + ($0.message.map { " (\($0))" } ?? ""), accountId: $0.accountId, attempts: $0.attempts,
                    lastError: $0.lastError ?? "", deadAt: Self.date($0.deadAt)
                )
            }
            page.hasDeliveries = !found.isEmpty
        }
    }

    func redeliver(_ form: ConsoleForm, _ visit: Visit, _ key: String) async throws -> Response {
        let group = form["group"] ?? ""
        let count = try await operations.redeliver(group: group)
        return redirect("/deliveries?" + Self.query([("group", group), ("redelivered", String(count))]), visit: visit)
    }

    // MARK: Helpers

    static func auditRow(_ entry: GatewayAdminOperations.AuditEntry) -> AdminConsolePage.AuditRow {
        AdminConsolePage.AuditRow(
            at: date(entry.occurredAt), type: entry.type, accountId: entry.accountId, actor: entry.actorType + (entry.actorId.map { " \($0)" } ?? ""),
            facts: entry.facts.map { "\($0.key)=\($0.value)" }.joined(separator: " "), erased: entry.erased
        )
    }

    static func query(_ parameters: [(String, String)]) -> String {
        var components = URLComponents()
        components.queryItems = parameters.map { URLQueryItem(name: $0.0, value: $0.1) }
        // `+` is a space to a form decoder: encode it too.
        return (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
    }

    static func pathComponent(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_.~"))) ?? ""
    }
}

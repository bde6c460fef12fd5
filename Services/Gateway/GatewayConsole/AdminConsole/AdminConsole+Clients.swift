import Foundation
import GatewayService
import HTTPTypes
import Hummingbird
import KontoModel

/// The admin console's OpenID Provider clients (docs/OIDC.md, "Clients through the admin API"): listed, registered,
/// changed, given a new secret and removed through the admin API (scope clients:write). The clients file's are shown
/// read-only: they change only in the file.
extension AdminConsole {
    func registerClients(on router: Router<GatewayRequestContext>) {
        let base = Self.basePath
        router.get(RouterPath(base + "/clients")) { request, _ in await self.signedIn(request) { visit, _ in try await self.clientsPage(visit) } }
        router.post(RouterPath(base + "/clients/add")) { request, _ in await self.form(request) { visit, form, _ in try await self.addClient(form, visit) } }
        router.get(RouterPath(base + "/clients/edit")) { request, _ in
            let id = request.uri.queryParameters.get("client").map { String($0.prefix(200)) } ?? ""
            return await self.signedIn(request) { visit, _ in try await self.editClientPage(id, visit) }
        }
        router.post(RouterPath(base + "/clients/update")) { request, _ in await self.form(request) { visit, form, _ in try await self.updateClient(form, visit) } }
        router.post(RouterPath(base + "/clients/rotate")) { request, _ in await self.form(request) { visit, form, _ in try await self.rotateClientSecret(form, visit) } }
        router.post(RouterPath(base + "/clients/remove")) { request, _ in
            await self.form(request) { visit, form, _ in
                let id = form["client"] ?? ""
                do {
                    let removed = try await self.operations.removeOpenIDClient(clientId: id)
                    return try await self.clientsPage(
                        visit, notice: "Removed \(id): \(removed.grantsEnded) grants ended, \(removed.consentsRemoved) consents removed."
                    )
                } catch {
                    return try await self.refusedClientAction(error, visit)
                }
            }
        }
    }

    /// The scopes Konto offers a client, as the form's checkboxes.
    static let clientScopes = ["openid", "profile", "email", "offline_access"]

    func clientsPage(
        _ visit: Visit, notice: String? = nil, madeSecret: String? = nil, formError: String? = nil, form: AdminConsolePage.ClientForm? = nil,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let clients = try await operations.openIDClients()
        return page("adminClients", title: "OpenID clients", visit: visit, status: status) { page in
            page.notice = notice
            page.madeSecret = madeSecret
            page.formError = formError
            page.clients = clients.map(Self.clientRow)
            page.hasClients = !clients.isEmpty
            page.clientForm = form ?? Self.clientForm()
        }
    }

    static func clientRow(_ client: GatewayAdminOperations.OpenIDClient) -> AdminConsolePage.ClientRow {
        var kind = client.type + (client.authentication.map { " · \($0)" } ?? "")
        if !client.keyIds.isEmpty { kind += " (keys \(client.keyIds.joined(separator: ", ")))" }
        return AdminConsolePage.ClientRow(
            id: client.id, name: client.name, kind: kind, fromFile: client.source == "file", redirectURIs: client.redirectURIs,
            postLogoutRedirectURIs: client.postLogoutRedirectURIs, scopes: client.scopes.joined(separator: " "), firstParty: client.firstParty,
            created: client.createdAt.map(date), previousSecretUntil: client.previousSecretExpiresAt.map(date),
            rotatable: client.source == "api" && client.usesSecret
        )
    }

    /// The registration form: blank (a confidential client with a Basic secret, openid, ES256), or with what was given.
    /// `editing`: a registered client's change, offering only what the API lets it keep or move to (its type; a secret
    /// client's Basic or Post, a private_key_jwt client's keys).
    static func clientForm(_ given: GatewayAdminOperations.OpenIDClientSettings? = nil, editing: Bool = false) -> AdminConsolePage.ClientForm {
        func options(_ values: [(String, String)], selected: (String) -> Bool) -> [AdminConsolePage.Option] {
            values.map { AdminConsolePage.Option(value: $0.0, label: $0.1, selected: selected($0.0)) }
        }
        var types = [("confidential", "confidential (its servers keep a secret or a key)"), ("public", "public (a browser or mobile app)")]
        var methods = [("client_secret_basic", "client_secret_basic"), ("client_secret_post", "client_secret_post"), ("private_key_jwt", "private_key_jwt")]
        let type = given?.type ?? "confidential"
        let usesKeys = given?.authentication == "private_key_jwt"
        if editing {
            types = types.filter { $0.0 == type }
            methods = type == "public" ? [] : methods.filter { ($0.0 == "private_key_jwt") == usesKeys }
        }
        return AdminConsolePage.ClientForm(
            action: editing ? "/clients/update" : "/clients/add", editing: editing, id: given?.id ?? "", name: given?.name ?? "",
            types: options(types) { $0 == type },
            choosesAuthentication: !methods.isEmpty,
            authentications: options(methods) { $0 == (given?.authentication ?? "client_secret_basic") },
            takesKeys: !editing || (type == "confidential" && usesKeys),
            jwks: given?.jwks ?? "", redirectURIs: given?.redirectURIs.joined(separator: "\n") ?? "",
            postLogoutRedirectURIs: given?.postLogoutRedirectURIs.joined(separator: "\n") ?? "",
            scopes: options(clientScopes.map { ($0, $0) }) { (given?.scopes ?? ["openid"]).contains($0) },
            firstParty: given?.firstParty ?? false,
            idTokenAlgorithms: options([("ES256", "ES256"), ("RS256", "RS256")]) { $0 == (given?.idTokenAlgorithm ?? "ES256") },
            sectorIdentifier: given?.sectorIdentifier ?? ""
        )
    }

    /// The settings a registration or a change form gives, as the API takes them.
    static func clientSettings(_ form: ConsoleForm) -> GatewayAdminOperations.OpenIDClientSettings {
        func lines(_ name: String) -> [String] {
            (form[name] ?? "").split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let sector = (form["sectorIdentifier"] ?? "").trimmingCharacters(in: .whitespaces)
        return GatewayAdminOperations.OpenIDClientSettings(
            id: (form["id"] ?? "").trimmingCharacters(in: .whitespaces), name: form["name"] ?? "", type: form["type"] ?? "",
            authentication: form["authentication"], jwks: form["jwks"], redirectURIs: lines("redirectUris"),
            postLogoutRedirectURIs: lines("postLogoutRedirectUris"), scopes: form.list("scopes"), firstParty: form["firstParty"] == "true",
            idTokenAlgorithm: form["idTokenAlgorithm"], sectorIdentifier: sector.isEmpty ? nil : sector
        )
    }

    func addClient(_ form: ConsoleForm, _ visit: Visit) async throws -> Response {
        let settings = Self.clientSettings(form)
        do {
            let saved = try await operations.createOpenIDClient(settings)
            let secretNote = saved.secret == nil ? "" : " Its client secret is below, shown this once: give it to the application's servers."
            return try await clientsPage(visit, notice: "Registered \(saved.client.id)." + secretNote, madeSecret: saved.secret)
        } catch {
            let problem = operations.problem(for: error)
            if problem.code == .adminKeyRefused { return refusal(problem, visit: visit) }
            return try await clientsPage(visit, formError: Self.message(for: problem), form: Self.clientForm(settings), status: problem.status)
        }
    }

    /// A client's change: the registration form alone, filled with its settings.
    func editClientPage(
        _ form: AdminConsolePage.ClientForm, _ visit: Visit, formError: String? = nil, status: HTTPResponse.Status = .ok
    ) -> Response {
        page("adminClients", title: "Change the client \(form.id)", visit: visit, status: status) { page in
            page.formError = formError
            page.clientForm = form
        }
    }

    func editClientPage(_ id: String, _ visit: Visit) async throws -> Response {
        // The API has no single client to read: the list has it, as the page it comes from shows it.
        guard let client = try await operations.openIDClients().first(where: { $0.id == id }) else {
            return try await clientsPage(visit, formError: "No OpenID Provider client has the id \"\(id)\".", status: .notFound)
        }
        guard client.source == "api" else {
            return try await clientsPage(visit, formError: "\(id) is the deployment's clients file's: change it there.", status: .conflict)
        }
        return editClientPage(Self.clientForm(client.settings, editing: true), visit)
    }

    func updateClient(_ form: ConsoleForm, _ visit: Visit) async throws -> Response {
        let settings = Self.clientSettings(form)
        do {
            let saved = try await operations.updateOpenIDClient(settings)
            return try await clientsPage(visit, notice: "Changed \(saved.id).")
        } catch {
            let problem = operations.problem(for: error)
            // A client gone or the file's: no form to correct, said above the list (as a removal's refusal is).
            if problem.status == .notFound || problem.status == .conflict { return try await refusedClientAction(error, visit) }
            if problem.code == .adminKeyRefused { return refusal(problem, visit: visit) }
            return editClientPage(Self.clientForm(settings, editing: true), visit, formError: Self.message(for: problem), status: problem.status)
        }
    }

    func rotateClientSecret(_ form: ConsoleForm, _ visit: Visit) async throws -> Response {
        let id = form["client"] ?? ""
        let keep = Int(form["keepPreviousSeconds"] ?? "") ?? 0
        do {
            let saved = try await operations.rotateOpenIDClientSecret(clientId: id, keepPreviousSeconds: keep)
            let previous = saved.client.previousSecretExpiresAt.map { "The previous one is still accepted until \(Self.date($0))." }
                ?? "The previous one is refused from now on."
            return try await clientsPage(
                visit, notice: "Gave \(id) a new client secret, below, shown this once. \(previous)", madeSecret: saved.secret
            )
        } catch {
            return try await refusedClientAction(error, visit)
        }
    }

    /// A refused rotation or removal said above the list (an unknown client, one of the file's).
    func refusedClientAction(_ error: any Error, _ visit: Visit) async throws -> Response {
        let problem = operations.problem(for: error)
        if problem.code == .adminKeyRefused { return refusal(problem, visit: visit) }
        // The console's 404 says "no such page"; here the page is there and the client is not: the API's words.
        let message = problem.status == .notFound ? problem.detail ?? Self.message(for: problem) : Self.message(for: problem)
        return try await clientsPage(visit, formError: message, status: problem.status)
    }
}

import KontoContracts
import KontoModel
import Logging

extension OpenIDProvider {
    /// RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0): the console's session ends, with every grant
    /// made through it, when the request proves it comes from the application that session signed in to — an
    /// `id_token_hint` Konto signed (expired or not) whose `sub` is the session's account for that client — or when
    /// the person confirms on the console's page. Anything else could be a stranger's page signing people out, so it is
    /// asked. A `post_logout_redirect_uri` must be one the client registered, matched exactly; the browser goes there
    /// with `state` only after a sign-out (or when no one was signed in).
    func logout(_ request: IdentityOpenIDLogoutRequest) async throws(ServiceError) -> IdentityOpenIDLogout {
        guard let settings, let issuer else { return .refused("invalid_request", "Konto is no OpenID Provider here.") }
        let now = clock()
        var values: [String: String] = [:]
        for parameter in request.parameters {
            guard values[parameter.name] == nil else { return .refused("invalid_request", "\(parameter.name) is given more than once.") }
            values[parameter.name] = parameter.value
        }
        let tokens = await issuer.value
        var hint: (subject: String, clientId: String)?
        if let text = values["id_token_hint"] {
            guard let verified = await tokens.verifiedIDTokenHint(text) else {
                return .refused("invalid_request", "The id_token_hint is not an ID token Konto issued.")
            }
            hint = verified
        }
        if let given = values["client_id"], let hint, given != hint.clientId {
            return .refused("invalid_request", "The client_id is not the one the id_token_hint was issued to.")
        }
        var client: OpenIDClient?
        if let clientId = values["client_id"] ?? hint?.clientId {
            guard let registered = try await registeredClient(clientId, settings: settings, at: now) else {
                return .refused("invalid_request", "There is no such application.")
            }
            client = registered
        }
        var location: String?
        if let uri = values["post_logout_redirect_uri"] {
            guard let client else { return .refused("invalid_request", "A post_logout_redirect_uri needs an id_token_hint or a client_id.") }
            guard client.postLogoutRedirectURIs.contains(uri) else {
                return .refused("invalid_request", "The post_logout_redirect_uri is not one the application registered.")
            }
            location = Self.location(uri, ["state": values["state"]])
        }
        let summary = client.map { IdentityOpenIDClientSummary(id: $0.id, name: $0.name) }

        // No one signed in: nothing to end, and the application may have its person back.
        guard let session = try await consoleSession(request.token, at: now) else { return IdentityOpenIDLogout(outcome: .loggedOut, location: location, client: summary) }
        let proven = hint.flatMap { hint in client.map { tokens.subject(accountId: session.accountId, for: $0) == hint.subject } } ?? false
        guard proven || request.confirmed else { return IdentityOpenIDLogout(outcome: .confirm, client: summary) }

        let accountId = session.accountId
        let clientId = client?.id
        let events = [event(accountId, .disassociatingAccount, at: now)]
        let ended = try await stored { () async throws(IdentityStorageError) in
            try await storage.endSessionAndGrants(sessionId: session.id, accountId: accountId, events: events) { count in
                guard let clientId else { return [] }
                return [self.record("oidc.logout", accountId: accountId, actor: .account, clientId: clientId, at: now, facts: ["grantsEnded": String(count)])]
            }
        }
        logger.info("OpenID logout", metadata: ["konto.account_id": "\(accountId)", "konto.grants_ended": "\(ended ?? 0)"])
        return IdentityOpenIDLogout(outcome: .loggedOut, location: location, client: summary, grantsEnded: ended ?? 0)
    }
}

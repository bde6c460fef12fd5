import Crypto
import Foundation
import JWTKit
import KontoContracts
import KontoModel
import Logging

extension OpenIDProvider {
    /// The authorization endpoint's decision (RFC 6749 4.1, OpenID Connect Core 3.1.2): refuse on the page, redirect an
    /// error to the client, ask the console to sign in or to show the consent page, or issue a code bound to the
    /// client, its redirect URI, the PKCE challenge, the nonce and the console's session.
    func authorize(_ request: IdentityOpenIDAuthorizeRequest) async throws(ServiceError) -> IdentityOpenIDAuthorization {
        guard let settings else { return .refused("unsupported", "Konto is no OpenID Provider here.") }
        let now = clock()
        let authorization: OpenIDAuthorizationRequest
        let clients = try await namedClient(in: request, settings: settings, at: now)
        do {
            authorization = try OpenIDAuthorizationRequest.check(request.parameters.map { ($0.name, $0.value) }, clients: clients)
        } catch {
            switch error {
            case .notRedirectable(let description): return .refused("invalid_request", description)
            case .redirect(let code, let description, let redirectURI, let state):
                return .redirect(Self.location(redirectURI, ["error": code, "error_description": description, "state": state, "iss": settings.issuer]))
            }
        }
        let redirect = { (code: String, description: String) -> IdentityOpenIDAuthorization in
            .redirect(Self.location(authorization.redirectURI, ["error": code, "error_description": description, "state": authorization.state, "iss": settings.issuer]))
        }
        if request.consentDenied == true {
            return redirect("access_denied", "The person did not allow it.")
        }
        let silent = authorization.prompts.contains(.none)

        // A session, signed in recently enough and strongly enough.
        guard let session = try await consoleSession(request.token, at: now), session.account?.isAnonymous == false, session.account?.disabledAt == nil else {
            return silent ? redirect("login_required", "No one is signed in.") : .signIn(.login)
        }
        let authTime = authenticatedAt(session)
        if authorization.prompts.contains(.login), authTime < request.requestedAt {
            return .signIn(.login)
        }
        // A sign-in made since the request satisfies any max_age (0 included: OpenID Connect Core 3.1.2.1 reads it as
        // prompt=login).
        if let maxAge = authorization.maxAge, authTime < request.requestedAt, now.milliseconds - authTime.milliseconds > Int64(maxAge) * 1_000 {
            return silent ? redirect("login_required", "The sign-in is older than max_age.") : .signIn(.reauthenticate)
        }
        if let required = authorization.requiredAssuranceLevel, session.assuranceLevel < required {
            // Only where the account can give more: acr is a voluntary claim (OpenID Connect Core 5.5.1.1), the ID
            // token's `acr` tells the client what it got.
            let factors = try await stored { () async throws(IdentityStorageError) in try await storage.factors(accountId: session.accountId) }
            if factors.contains(where: \.demandsSecondFactor) {
                return silent ? redirect("interaction_required", "A second factor is needed.") : .signIn(.secondFactor)
            }
        }

        // Consent, for a third-party client: remembered per client, covering every scope asked for.
        let client = authorization.client
        if !client.isFirstParty {
            let remembered = try await stored { () async throws(IdentityStorageError) in
                try await storage.openIDConsent(accountId: session.accountId, clientId: client.id)
            }
            let covered = remembered.map { Set(authorization.scopes).isSubset(of: $0.scopes) } ?? false
            if request.consentGiven {
                let scopes = Set(authorization.scopes).union(remembered?.scopes ?? []).sorted()
                let consent = StoredOpenIDConsent(accountId: session.accountId, clientId: client.id, scopes: scopes, grantedAt: now)
                let entry = record("oidc.consented", accountId: session.accountId, actor: .account, clientId: client.id, at: now, facts: ["scopes": scopes.joined(separator: " ")])
                try await stored { () async throws(IdentityStorageError) in try await storage.saveOpenIDConsent(consent, audit: [entry]) }
            } else if !covered || authorization.prompts.contains(.consent) {
                return silent
                    ? redirect("consent_required", "The person has not let this application have what it asks for.")
                    : IdentityOpenIDAuthorization(outcome: .consent, client: IdentityOpenIDClientSummary(id: client.id, name: client.name), scopes: authorization.scopes)
            }
        }

        let code = SecretToken.generate()
        let stored = StoredAuthorizationCode(
            codeHash: SecretToken.hash(code), accountId: session.accountId, sessionId: session.id, clientId: client.id,
            redirectURI: authorization.redirectURI, codeChallenge: authorization.codeChallenge, scopes: authorization.scopes, nonce: authorization.nonce,
            authTime: authTime, assuranceLevel: session.assuranceLevel, signInMethod: session.signInMethod, credentialVersion: session.credentialVersion,
            issuedAt: now, expiresAt: now.adding(settings.codeLifetime), keepUntil: now.adding(settings.codeLifetime + Self.usedCodeMemory)
        )
        do {
            try await storage.createAuthorizationCode(stored)
        } catch {
            // The session ended or the credential changed since it was checked: sign in again.
            guard error.code == .notFound else { throw Self.error(for: error) }
            return silent ? redirect("login_required", "No one is signed in.") : .signIn(.login)
        }
        return .redirect(Self.location(authorization.redirectURI, ["code": code, "state": authorization.state, "iss": settings.issuer]))
    }

    /// The browser's console session; nil without one, or for an ended or expired one (the storage's failures are the
    /// service's).
    func consoleSession(_ token: BearerToken?, at now: Timestamp) async throws(ServiceError) -> StoredSession? {
        guard let token else { return nil }
        do {
            return try await sessions.validSession(token, at: now)
        } catch {
            guard error.code == AccountError.Code.unauthenticated else { throw error }
            return nil
        }
    }

    /// When the session's owner last proved who they are: its sign-in, or a later reauthentication (which opened the
    /// privileged window).
    func authenticatedAt(_ session: StoredSession) -> Timestamp {
        guard let until = session.privilegedUntil else { return session.createdAt }
        let reauthenticated = until.adding(.zero - options.privilegedWindow)
        return reauthenticated > session.createdAt ? reauthenticated : session.createdAt
    }

    /// The redirect URI with the answer's parameters added to its query (RFC 6749 4.1.2: keeping its own), in a fixed
    /// order; nil values left out.
    static func location(_ redirectURI: String, _ parameters: KeyValuePairs<String, String?>) -> String {
        var components = URLComponents(string: redirectURI)
        var items = components?.queryItems ?? []
        for (name, value) in parameters {
            if let value { items.append(URLQueryItem(name: name, value: value)) }
        }
        // Nothing to add (a logout's redirect without a state): the URI as registered, without an empty query.
        guard !items.isEmpty else { return redirectURI }
        components?.queryItems = items
        // URLComponents leaves '+' alone in queries, which form decoding reads as a space.
        let query = components?.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        components?.percentEncodedQuery = query
        return components?.string ?? redirectURI
    }

    /// The client the request names (its one `client_id`), looked up before the request is checked; none when it
    /// names none, several or an unknown one (the check then refuses it).
    private func namedClient(in request: IdentityOpenIDAuthorizeRequest, settings: OpenIDProviderSettings, at now: Timestamp) async throws(ServiceError) -> OpenIDClients {
        let ids = request.parameters.filter { $0.name == "client_id" }.map(\.value)
        guard ids.count == 1, let client = try await registeredClient(ids[0], settings: settings, at: now) else { return .none }
        return OpenIDClients([client])
    }
}

import Foundation
import HTTPTypes
import KontoModel
import OpenAPIRuntime

/// The console's external sign-in, through the API's own handlers.
extension GatewayOperations {
    package struct IdentityProvider: Sendable, Equatable {
        package var name: String
        package var displayName: String
    }

    /// What a provider's sign-in came to for the console.
    package enum ProviderSignIn: Sendable {
        case signedIn(LogInAnswer)
        /// Values the account still needs: the token to send back with them, what is missing, what the provider gave.
        case signUp(token: String, missing: [AccountFieldError], offered: AccountDetails)
    }

    package func identityProviders() async throws -> [IdentityProvider] {
        try await api.listIdentityProviders(.init()).ok.body.json.providers.map { IdentityProvider(name: $0.name, displayName: $0.displayName) }
    }

    package func authorizationURL(provider: String, redirectURI: String, state: String, nonce: String, codeChallenge: String) async throws -> String {
        let body = Components.Schemas.ExternalAuthorizationRequest(provider: provider, redirectUri: redirectURI, state: state, nonce: nonce, codeChallenge: codeChallenge)
        return try await api.externalAuthorization(.init(body: .json(body))).ok.body.json.url
    }

    /// The web flow's callback: the code exchanged with its verifier; Apple's name from its first callback.
    package func logIn(provider: String, code: String, codeVerifier: String, redirectURI: String, nonce: String, name: PersonName?) async throws -> ProviderSignIn {
        try await providerSignIn(Components.Schemas.ExternalLogin(
            provider: provider, nonce: nonce, authorizationCode: code, codeVerifier: codeVerifier, redirectUri: redirectURI,
            name: name.map { .init(givenName: $0.givenName, familyName: $0.familyName) }
        ))
    }

    package func completeSignUp(provider: String, token: String, userId: String, details: AccountDetails) async throws -> ProviderSignIn {
        try await providerSignIn(Components.Schemas.ExternalLogin(provider: provider, signUpToken: token, userId: userId, details: details))
    }

    private func providerSignIn(_ body: Components.Schemas.ExternalLogin) async throws -> ProviderSignIn {
        switch try await api.logInWithProvider(.init(body: .json(body))) {
        case .ok(let ok): return .signedIn(.signedIn(Self.session(try ok.body.json.session)))
        case .created(let created): return .signedIn(.signedIn(Self.session(try created.body.json.session)))
        case .accepted(let accepted):
            let pending = try accepted.body.json
            if let signUp = pending.signUp {
                return .signUp(
                    token: signUp.token,
                    missing: signUp.missing.map { AccountFieldError(key: $0.key, code: AccountFieldError.Code(rawValue: $0.code), message: $0.message) },
                    offered: signUp.details
                )
            }
            guard let challenge = pending.challenge else {
                throw GatewayProblem(status: .badGateway, code: .gatewayUpstreamFailed, detail: "The sign-in answered 202 with neither a challenge nor a sign-up.")
            }
            return .signedIn(.secondFactor(token: challenge.token, expiresAt: challenge.expiresAt, factors: challenge.factors, passkeyOptions: try challenge.passkey.map(Self.json)))
        case .default(let status, _):
            throw GatewayProblem(status: .badGateway, code: .gatewayUpstreamFailed, detail: "The sign-in answered \(status).")
        }
    }
}

/// The console's page of linked identities, through the API's own handlers.
extension GatewayOperations {
    package struct LinkedIdentity: Sendable, Equatable {
        package var id: String
        package var provider: String
        package var email: String?
        package var createdAt: Date
        package var lastUsedAt: Date?
    }

    package func linkedIdentities() async throws -> [LinkedIdentity] {
        try await api.listIdentities(.init()).ok.body.json.identities.map {
            LinkedIdentity(id: $0.id, provider: $0.provider, email: $0.email, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt)
        }
    }

    /// Links the identity a provider's web flow vouched for (the code with its PKCE verifier).
    package func linkIdentity(provider: String, code: String, codeVerifier: String, redirectURI: String, nonce: String, currentPassword: String?) async throws {
        let body = Components.Schemas.IdentityLink(
            provider: provider, nonce: nonce, authorizationCode: code, codeVerifier: codeVerifier, redirectUri: redirectURI, currentPassword: currentPassword
        )
        _ = try await api.linkIdentity(.init(body: .json(body))).created
    }

    package func unlinkIdentity(id identityId: String, currentPassword: String?) async throws {
        let body = currentPassword.map { Operations.UnlinkIdentity.Input.Body.json(.init(currentPassword: $0)) }
        _ = try await api.unlinkIdentity(.init(path: .init(identityId: identityId), body: body)).noContent
    }
}

import Foundation
import HTTPTypes
import KontoContracts
import KontoModel
import OpenAPIRuntime

/// External identity providers over HTTP: sign-in (native and web), and the account's linked identities.
extension GatewayAPI {
    func listIdentityProviders(_ input: Operations.ListIdentityProviders.Input) async throws -> Operations.ListIdentityProviders.Output {
        let list = try await upstreams.identity(IdentityContract.identityProviders, IdentityClientRequest(clientAddress: Self.clientAddress))
        return .ok(.init(body: .json(.init(providers: list.providers.map { .init(name: $0.name, displayName: $0.displayName) }))))
    }

    func externalAuthorization(_ input: Operations.ExternalAuthorization.Input) async throws -> Operations.ExternalAuthorization.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let request = IdentityAuthorizationRequest(provider: body.provider, redirectURI: body.redirectUri, state: body.state, nonce: body.nonce, codeChallenge: body.codeChallenge)
        return .ok(.init(body: .json(.init(url: try await upstreams.identity(IdentityContract.externalAuthorization, request).url))))
    }

    func logInWithProvider(_ input: Operations.LogInWithProvider.Input) async throws -> Operations.LogInWithProvider.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let anonymous = RequestScope.scope.bearerToken.map(BearerToken.init)
        let request = IdentityExternalLoginRequest(
            provider: body.provider, idToken: body.idToken.map(SecretString.init), nonce: body.nonce.map(SecretString.init),
            authorizationCode: body.authorizationCode.map(SecretString.init), codeVerifier: body.codeVerifier.map(SecretString.init),
            redirectURI: body.redirectUri, name: body.name.map { PersonName(givenName: $0.givenName, familyName: $0.familyName) },
            signUpToken: body.signUpToken.map(BearerToken.init), userId: body.userId, details: body.details,
            anonymousSession: anonymous, clientAddress: Self.clientAddress, clientDevice: RequestScope.scope.clientDevice, clientName: Self.clientName
        )
        // An upgraded anonymous account changes (its sessions end, a fresh one replaces them).
        let answer = if anonymous != nil {
            try await changingAccount { _, _ in try await upstreams.identity(IdentityContract.externalLogin, request) }
        } else {
            try await upstreams.identity(IdentityContract.externalLogin, request)
        }
        return try Self.externalSignedIn(answer)
    }

    /// An external sign-in's answer over HTTP: 200 (signed in), 201 (a new account), 202 (a challenge or a sign-up).
    static func externalSignedIn(_ answer: IdentityExternalLoginAnswer) throws -> Operations.LogInWithProvider.Output {
        if let session = answer.accountSession {
            let body = try accountSession(session)
            return answer.created ? .created(.init(body: .json(body))) : .ok(.init(body: .json(body)))
        }
        if let challenge = answer.challenge {
            return .accepted(.init(body: .json(.init(challenge: .init(
                token: challenge.token.value, expiresAt: challenge.expiresAt.date, factors: challenge.factors, passkey: challenge.passkey
            )))))
        }
        if let signUp = answer.signUp {
            return .accepted(.init(body: .json(.init(signUp: .init(
                token: signUp.token.value, expiresAt: signUp.expiresAt.date, provider: signUp.provider,
                missing: signUp.missing.map { .init(key: $0.key, code: $0.code.rawValue, message: $0.message) }, details: signUp.details
            )))))
        }
        throw GatewayProblem(status: .badGateway, code: .gatewayUpstreamFailed, detail: "Identity answered the sign-in with neither a session, a challenge nor a sign-up.")
    }

    func listIdentities(_ input: Operations.ListIdentities.Input) async throws -> Operations.ListIdentities.Output {
        let (token, _) = try await authenticate()
        let identities = try await upstreams.identity(IdentityContract.listIdentities, IdentitySessionRequest(token: token))
        return .ok(.init(body: .json(.init(identities: identities.identities.map(Self.identity)))))
    }

    func linkIdentity(_ input: Operations.LinkIdentity.Input) async throws -> Operations.LinkIdentity.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let linked = try await changingAccount { token, session in
            // A provider's identity is a way in: not added to an account whose address is unproven where verified
            // addresses are required (the first proof would end it anyway).
            try requireVerifiedAddress(session)
            return try await upstreams.identity(IdentityContract.linkIdentity, IdentityLinkIdentityRequest(
                token: token, currentPassword: body.currentPassword.map(SecretString.init), provider: body.provider,
                idToken: body.idToken.map(SecretString.init), nonce: body.nonce.map(SecretString.init),
                authorizationCode: body.authorizationCode.map(SecretString.init), codeVerifier: body.codeVerifier.map(SecretString.init),
                redirectURI: body.redirectUri
            ))
        }
        return .created(.init(body: .json(Self.identity(linked))))
    }

    func unlinkIdentity(_ input: Operations.UnlinkIdentity.Input) async throws -> Operations.UnlinkIdentity.Output {
        let currentPassword = Self.currentPassword(input.body.map { if case .json(let body) = $0 { body } else { nil } } ?? nil)
        _ = try await changingAccount { token, _ in
            try await upstreams.identity(
                IdentityContract.unlinkIdentity,
                IdentityUnlinkIdentityRequest(token: token, currentPassword: currentPassword, identityId: input.path.identityId)
            )
        }
        return .noContent(.init())
    }

    static func identity(_ identity: IdentityExternalIdentity) -> Components.Schemas.ExternalIdentity {
        .init(id: identity.id, provider: identity.provider, email: identity.email, emailVerified: identity.emailVerified, createdAt: identity.createdAt.date, lastUsedAt: identity.lastUsedAt?.date)
    }
}

import Foundation
import KontoModel
import OpenAPIRuntime

/// A provider a deployment offers (`GET /v1/identity-providers`).
public struct KontoIdentityProvider: Sendable, Equatable {
    public var name: String
    public var displayName: String
}

/// An external identity linked to the account.
public struct KontoLinkedIdentity: Sendable, Equatable {
    public var id: String
    public var provider: String
    public var email: String?
    public var emailVerified: Bool
    public var createdAt: Date
    public var lastUsedAt: Date?
}

/// A first sign-in with a provider that needs values the provider did not give: complete it with
/// ``KontoClient/completeSignUp(_:userId:details:)`` before ``expiresAt``.
public struct KontoExternalSignUp: Sendable, Equatable {
    public var token: String
    public var expiresAt: Date
    public var provider: String
    /// Each value still needed (or refused), as a sign-up's field errors name them.
    public var missing: [AccountFieldError]
    /// What the provider gave (its address as `userId` where usable, the name): to fill the form with.
    public var offered: AccountDetails
}

/// What signing in with a provider came to.
public enum KontoProviderSignIn: Sendable, Equatable {
    /// Signed in; `created` when this made the account (or upgraded the anonymous one).
    case signedIn(KontoSignIn, created: Bool)
    /// The account needs more values first.
    case signUpRequired(KontoExternalSignUp)
}

extension KontoClient {
    /// The providers the deployment offers.
    public func identityProviders() async throws -> [KontoIdentityProvider] {
        switch try await call({ try await $0.listIdentityProviders() }) {
        case .ok(let ok): return try ok.body.json.providers.map { KontoIdentityProvider(name: $0.name, displayName: $0.displayName) }
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Signs in with a provider's ID token (the native flow: Sign in with Apple's `identityToken`, with its
    /// `authorizationCode` and, the first time only, the name Apple gave the app). `nonce` is the one whose SHA-256
    /// the app gave Apple (for other providers, the nonce sent). An anonymous session kept by this client is upgraded
    /// when the identity is new. With a second factor enrolled this throws
    /// ``KontoClientError/Code/secondFactorRequired`` with the challenge, as ``logIn(userId:password:)`` does.
    public func logIn(provider: String, idToken: String, nonce: String, authorizationCode: String? = nil, name: PersonName? = nil) async throws -> KontoProviderSignIn {
        let body = Components.Schemas.ExternalLogin(
            provider: provider, idToken: idToken, nonce: nonce, authorizationCode: authorizationCode,
            name: name.map { .init(givenName: $0.givenName, familyName: $0.familyName) }
        )
        return try await providerSignIn(body)
    }

    /// Completes a first sign-in with the values it asked for.
    @discardableResult
    public func completeSignUp(_ signUp: KontoExternalSignUp, userId: String, details: AccountDetails = AccountDetails()) async throws -> KontoSignIn {
        let body = Components.Schemas.ExternalLogin(provider: signUp.provider, signUpToken: signUp.token, userId: userId, details: details)
        switch try await providerSignIn(body) {
        case .signedIn(let signIn, _): return signIn
        case .signUpRequired: throw KontoClientError(code: KontoClientError.Code.unexpectedAnswer, status: 202, detail: "The sign-up asked for values again.")
        }
    }

    private func providerSignIn(_ body: Components.Schemas.ExternalLogin) async throws -> KontoProviderSignIn {
        let anonymous = try await sessions.load().flatMap { $0.isAnonymous ? $0 : nil }
        switch try await call(token: anonymous?.token, { try await $0.logInWithProvider(body: .json(body)) }) {
        case .ok(let ok):
            let session = try ok.body.json
            return .signedIn(try await signedIn(session, userId: Self.userId(session.details)), created: false)
        case .created(let created):
            let session = try created.body.json
            return .signedIn(try await signedIn(session, userId: Self.userId(session.details)), created: true)
        case .accepted(let accepted):
            let pending = try accepted.body.json
            if let signUp = pending.signUp {
                return .signUpRequired(KontoExternalSignUp(
                    token: signUp.token, expiresAt: signUp.expiresAt, provider: signUp.provider,
                    missing: signUp.missing.map { AccountFieldError(key: $0.key, code: AccountFieldError.Code(rawValue: $0.code), message: $0.message) },
                    offered: signUp.details
                ))
            }
            guard let challenge = pending.challenge else {
                throw KontoClientError(code: KontoClientError.Code.unexpectedAnswer, status: 202, detail: "Neither a challenge nor a sign-up.")
            }
            var error = KontoClientError(code: KontoClientError.Code.secondFactorRequired, status: 202, detail: "Enter a code from the authenticator app, or a recovery code.")
            error.challenge = KontoSecondFactorChallenge(
                token: challenge.token, expiresAt: challenge.expiresAt, factors: challenge.factors, userId: "",
                passkeyOptions: try challenge.passkey.map { try JSONEncoder().encode($0) }
            )
            throw error
        case .default(let status, let problem):
            throw Self.refusal(status, problem)
        }
    }

    private static func userId(_ details: AccountDetails) -> String? {
        if case .string(let userId)? = details.storedValues[UserIdKey.identifier] { return userId }
        return nil
    }

    /// The external identities linked to the account.
    public func identities() async throws -> [KontoLinkedIdentity] {
        let session = try await requireSession()
        switch try await call(token: session.token, { try await $0.listIdentities() }) {
        case .ok(let ok): return try ok.body.json.identities.map(Self.linked)
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Links a provider's identity (security-related, as ``changePassword(to:currentPassword:)``).
    @discardableResult
    public func linkIdentity(provider: String, idToken: String, nonce: String, authorizationCode: String? = nil, currentPassword: String? = nil) async throws -> KontoLinkedIdentity {
        let session = try await requireSession()
        let body = Components.Schemas.IdentityLink(provider: provider, idToken: idToken, nonce: nonce, authorizationCode: authorizationCode, currentPassword: currentPassword)
        switch try await call(token: session.token, { try await $0.linkIdentity(body: .json(body)) }) {
        case .created(let created): return Self.linked(try created.body.json)
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    /// Unlinks an identity (security-related); refused (`account.lastSignInMethod`) when it is the only way in.
    public func unlinkIdentity(id identityId: String, currentPassword: String? = nil) async throws {
        let session = try await requireSession()
        let body = currentPassword.map { Operations.UnlinkIdentity.Input.Body.json(.init(currentPassword: $0)) }
        switch try await call(token: session.token, { try await $0.unlinkIdentity(path: .init(identityId: identityId), body: body) }) {
        case .noContent: break
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
    }

    private static func linked(_ identity: Components.Schemas.ExternalIdentity) -> KontoLinkedIdentity {
        KontoLinkedIdentity(id: identity.id, provider: identity.provider, email: identity.email, emailVerified: identity.emailVerified, createdAt: identity.createdAt, lastUsedAt: identity.lastUsedAt)
    }
}

import Foundation
import HTTPTypes
import KontoContracts
import KontoModel
import OpenAPIRuntime

extension GatewayAPI {
    func signUp(_ input: Operations.SignUp.Input) async throws -> Operations.SignUp.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let request = IdentitySignUpRequest(
            userId: body.userId,
            password: SecretString(body.password),
            details: body.details ?? AccountDetails(),
            clientAddress: Self.clientAddress,
            // Signing up with an anonymous account's session upgrades that account.
            anonymousSession: RequestScope.scope.bearerToken.map(BearerToken.init),
            clientName: Self.clientName
        )
        // An upgraded anonymous account changes (its sessions end, a fresh one replaces them).
        let session = if request.anonymousSession != nil {
            try await changingAccount { _, _ in try await upstreams.identity(IdentityContract.signUp, request) }
        } else {
            try await upstreams.identity(IdentityContract.signUp, request)
        }
        return .created(.init(body: .json(try Self.accountSession(session))))
    }

    func logIn(_ input: Operations.LogIn.Input) async throws -> Operations.LogIn.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let request = IdentityLoginRequest(
            userId: body.userId, password: SecretString(body.password), clientAddress: Self.clientAddress, clientDevice: RequestScope.scope.clientDevice,
            clientName: Self.clientName
        )
        switch try Self.signedIn(try await upstreams.identity(IdentityContract.login, request)) {
        case .session(let session): return .ok(.init(body: .json(session)))
        case .challenge(let challenge): return .accepted(.init(body: .json(challenge)))
        }
    }

    func requestEmailCode(_ input: Operations.RequestEmailCode.Input) async throws -> Operations.RequestEmailCode.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let request = IdentityEmailCodeRequest(userId: body.userId, clientAddress: Self.clientAddress, clientDevice: RequestScope.scope.clientDevice)
        _ = try await upstreams.identity(IdentityContract.requestEmailCode, request)
        return .accepted(.init(body: .json(.init())))
    }

    func logInWithEmailCode(_ input: Operations.LogInWithEmailCode.Input) async throws -> Operations.LogInWithEmailCode.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let request = IdentityEmailCodeLoginRequest(
            userId: body.userId, code: SecretString(body.code), clientAddress: Self.clientAddress, clientDevice: RequestScope.scope.clientDevice,
            clientName: Self.clientName
        )
        switch try Self.signedIn(try await upstreams.identity(IdentityContract.emailCodeLogin, request)) {
        case .session(let session): return .ok(.init(body: .json(session)))
        case .challenge(let challenge): return .accepted(.init(body: .json(challenge)))
        }
    }

    enum SignedIn {
        case session(Components.Schemas.AccountSession)
        case challenge(Components.Schemas.SecondFactorChallenge)
    }

    /// A first factor's answer (a password, a mailed code): the session, or the second factor's challenge.
    static func signedIn(_ answer: IdentityLoginAnswer) throws -> SignedIn {
        if let challenge = answer.challenge {
            return .challenge(.init(challenge: .init(
                token: challenge.token.value, expiresAt: challenge.expiresAt.date, factors: challenge.factors, passkey: challenge.passkey
            )))
        }
        guard let session = answer.accountSession else {
            throw GatewayProblem(status: .badGateway, code: .gatewayUpstreamFailed, detail: "Identity answered the sign-in with neither a session nor a challenge.")
        }
        return .session(try accountSession(session))
    }

    func signInAnonymously(_ input: Operations.SignInAnonymously.Input) async throws -> Operations.SignInAnonymously.Output {
        let session = try await upstreams.identity(IdentityContract.signInAnonymously, IdentityClientRequest(clientAddress: Self.clientAddress, clientName: Self.clientName))
        return .created(.init(body: .json(try Self.accountSession(session))))
    }

    func logOut(_ input: Operations.LogOut.Input) async throws -> Operations.LogOut.Output {
        let ended = try await changingAccount { token, _ in
            try await upstreams.identity(IdentityContract.logout, IdentitySessionRequest(token: token))
        }
        await awaitCaches(ended.eventIds)
        return .noContent(.init())
    }

    func logOutEverywhere(_ input: Operations.LogOutEverywhere.Input) async throws -> Operations.LogOutEverywhere.Output {
        let ended = try await changingAccount { token, _ in
            try await upstreams.identity(IdentityContract.logoutEverywhere, IdentitySessionRequest(token: token))
        }
        await awaitCaches(ended.eventIds)
        return .ok(.init(body: .json(.init(sessionsEnded: ended.sessionsEnded))))
    }

    // MARK: The account's sessions and devices

    func listAccountSessions(_ input: Operations.ListAccountSessions.Input) async throws -> Operations.ListAccountSessions.Output {
        let (token, _) = try await authenticate()
        let list = try await upstreams.identity(IdentityContract.listSessions, IdentitySessionRequest(token: token))
        return .ok(.init(body: .json(.init(sessions: list.sessions.map(Self.sessionInfo)))))
    }

    static func sessionInfo(_ session: IdentityAccountSessionSummary) -> Components.Schemas.AccountSessionInfo {
        .init(
            id: session.id, createdAt: session.createdAt.date, idleExpiresAt: session.idleExpiresAt.date, absoluteExpiresAt: session.absoluteExpiresAt.date,
            assuranceLevel: session.assuranceLevel, privilegedUntil: session.privilegedUntil?.date, lastUsedAt: session.lastUsedAt?.date,
            signInMethod: session.signInMethod, clientAddress: session.clientAddress, clientName: session.clientName, current: session.current ?? false
        )
    }

    func endAccountSession(_ input: Operations.EndAccountSession.Input) async throws -> Operations.EndAccountSession.Output {
        let currentPassword = Self.currentPassword(input.body.map { if case .json(let body) = $0 { body } else { nil } } ?? nil)
        let ended = try await changingAccount { token, _ in
            try await upstreams.identity(IdentityContract.endSession, IdentityEndSessionRequest(
                token: token, sessionId: input.path.sessionId, currentPassword: currentPassword
            ))
        }
        // Answered once every gateway's cache has dropped the ended session.
        await awaitCaches(ended.eventIds)
        return .noContent(.init())
    }

    func endOtherAccountSessions(_ input: Operations.EndOtherAccountSessions.Input) async throws -> Operations.EndOtherAccountSessions.Output {
        let currentPassword = Self.currentPassword(input.body.map { if case .json(let body) = $0 { body } else { nil } } ?? nil)
        let ended = try await changingAccount { token, _ in
            try await upstreams.identity(IdentityContract.endOtherSessions, IdentitySecuredRequest(token: token, currentPassword: currentPassword))
        }
        await awaitCaches(ended.eventIds)
        return .ok(.init(body: .json(.init(sessionsEnded: ended.sessionsEnded))))
    }

    // MARK: Mail preferences

    func getMailPreferences(_ input: Operations.GetMailPreferences.Input) async throws -> Operations.GetMailPreferences.Output {
        let (token, _) = try await authenticate()
        let preferences = try await upstreams.identity(IdentityContract.mailPreferences, IdentitySessionRequest(token: token))
        return .ok(.init(body: .json(.init(newSignIn: preferences.newSignIn))))
    }

    func setMailPreferences(_ input: Operations.SetMailPreferences.Input) async throws -> Operations.SetMailPreferences.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let (token, _) = try await authenticate()
        let preferences = try await upstreams.identity(IdentityContract.setMailPreferences, IdentitySetMailPreferencesRequest(
            token: token, newSignIn: body.newSignIn, currentPassword: body.currentPassword.map(SecretString.init)
        ))
        return .ok(.init(body: .json(.init(newSignIn: preferences.newSignIn))))
    }

    func requestPasswordReset(_ input: Operations.RequestPasswordReset.Input) async throws -> Operations.RequestPasswordReset.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let request = IdentityPasswordResetRequest(userId: body.userId, clientAddress: Self.clientAddress, clientDevice: RequestScope.scope.clientDevice)
        _ = try await upstreams.identity(IdentityContract.requestPasswordReset, request)
        return .accepted(.init(body: .json(.init())))
    }

    func requestEmailVerification(_ input: Operations.RequestEmailVerification.Input) async throws -> Operations.RequestEmailVerification.Output {
        let (token, _) = try await authenticate()
        _ = try await upstreams.identity(IdentityContract.requestEmailVerification, IdentitySessionRequest(token: token))
        return .accepted(.init(body: .json(.init())))
    }

    func confirmEmailVerification(_ input: Operations.ConfirmEmailVerification.Input) async throws -> Operations.ConfirmEmailVerification.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        // A session sent with it is the confirmer's: then the proof is the owner's and ends nothing; one that is not
        // valid is 401 and the token stays (Identity checks it), never taken for none.
        let session = RequestScope.scope.bearerToken == nil ? nil : try Self.bearerToken()
        let verified = try await upstreams.identity(IdentityContract.confirmEmailVerification, IdentityConfirmEmailVerificationRequest(token: BearerToken(body.token), session: session))
        // The account's answer now says emailVerified: true; what is cached of it goes at once, not when the event comes.
        cache.invalidate(accountId: verified.accountId)
        return .noContent(.init())
    }

    func confirmEmailVerificationCode(_ input: Operations.ConfirmEmailVerificationCode.Input) async throws -> Operations.ConfirmEmailVerificationCode.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let (token, _) = try await authenticate()
        let verified = try await upstreams.identity(
            IdentityContract.confirmEmailVerificationCode, IdentityConfirmEmailVerificationCodeRequest(token: token, code: SecretString(body.code))
        )
        // As with the link: the cached answer says emailVerified: false until it goes.
        cache.invalidate(accountId: verified.accountId)
        return .noContent(.init())
    }

    func confirmPasswordReset(_ input: Operations.ConfirmPasswordReset.Input) async throws -> Operations.ConfirmPasswordReset.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let request = IdentityConfirmPasswordResetRequest(token: BearerToken(body.token), newPassword: SecretString(body.newPassword))
        // The reset ends every session of the account Identity names in its answer. A refusal changed nothing; only a
        // call whose outcome is unknown (the service down or late) may have ended sessions of an account the gateway
        // cannot name, and then everything goes.
        let confirmed: IdentitySessionsEnded
        do {
            confirmed = try await upstreams.identity(IdentityContract.confirmPasswordReset, request)
        } catch {
            if error.status.kind == .serverError { cache.removeAll() }
            throw error
        }
        if let accountId = confirmed.accountId {
            cache.invalidate(accountId: accountId)
        } else {
            cache.removeAll()
        }
        await awaitCaches(confirmed.eventIds)
        return .noContent(.init())
    }
}

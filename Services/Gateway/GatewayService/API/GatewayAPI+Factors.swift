import Foundation
import KontoContracts
import KontoModel
import OpenAPIRuntime

/// The second factor: the login's second step and the account's factors (docs/IDENTITY.md, "Second factor").
extension GatewayAPI {
    func completeSecondFactor(_ input: Operations.CompleteSecondFactor.Input) async throws -> Operations.CompleteSecondFactor.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let request = IdentitySecondFactorRequest(
            challenge: BearerToken(body.challenge),
            code: body.code.map(SecretString.init),
            recoveryCode: body.recoveryCode.map(SecretString.init),
            credential: body.credential,
            clientAddress: Self.clientAddress,
            clientDevice: RequestScope.scope.clientDevice,
            clientName: Self.clientName
        )
        let session = try await upstreams.identity(IdentityContract.completeSecondFactor, request)
        return .ok(.init(body: .json(try Self.accountSession(session))))
    }

    func listFactors(_ input: Operations.ListFactors.Input) async throws -> Operations.ListFactors.Output {
        let (token, _) = try await authenticate()
        let factors = try await upstreams.identity(IdentityContract.listFactors, IdentitySessionRequest(token: token))
        return .ok(.init(body: .json(.init(factors: factors.factors.map(Self.factor)))))
    }

    func enrollTOTP(_ input: Operations.EnrollTOTP.Input) async throws -> Operations.EnrollTOTP.Output {
        let currentPassword = Self.currentPassword(input.body.map { if case .json(let body) = $0 { body } else { nil } } ?? nil)
        let (token, session) = try await authenticate()
        try requireVerifiedAddress(session)
        let enrolment = try await upstreams.identity(IdentityContract.enrollTOTP, IdentitySecuredRequest(token: token, currentPassword: currentPassword))
        return .created(.init(body: .json(.init(factorId: enrolment.factorId, secret: enrolment.secret.value, otpauthUri: enrolment.otpauthURI.value))))
    }

    func confirmTOTP(_ input: Operations.ConfirmTOTP.Input) async throws -> Operations.ConfirmTOTP.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        // Confirming makes a login ask for the second factor: the account's events say so, and cached sessions go.
        let factor = try await changingAccount { token, session in
            try requireVerifiedAddress(session)
            return try await upstreams.identity(
                IdentityContract.confirmTOTP,
                IdentityConfirmFactorRequest(token: token, factorId: input.path.factorId, code: SecretString(body.code))
            )
        }
        return .ok(.init(body: .json(Self.factor(factor))))
    }

    func removeFactor(_ input: Operations.RemoveFactor.Input) async throws -> Operations.RemoveFactor.Output {
        let currentPassword = Self.currentPassword(input.body.map { if case .json(let body) = $0 { body } else { nil } } ?? nil)
        let removed = try await changingAccount { token, _ in
            try await upstreams.identity(
                IdentityContract.removeFactor,
                IdentityRemoveFactorRequest(token: token, factorId: input.path.factorId, currentPassword: currentPassword)
            )
        }
        return .ok(.init(body: .json(.init(remainingFactors: removed.remainingFactors))))
    }

    func regenerateRecoveryCodes(_ input: Operations.RegenerateRecoveryCodes.Input) async throws -> Operations.RegenerateRecoveryCodes.Output {
        let currentPassword = Self.currentPassword(input.body.map { if case .json(let body) = $0 { body } else { nil } } ?? nil)
        let (token, session) = try await authenticate()
        try requireVerifiedAddress(session)
        let codes = try await upstreams.identity(IdentityContract.regenerateRecoveryCodes, IdentitySecuredRequest(token: token, currentPassword: currentPassword))
        return .created(.init(body: .json(.init(codes: codes.codes.map(\.value)))))
    }

    // MARK: Passkeys

    func passkeyRegistrationOptions(_ input: Operations.PasskeyRegistrationOptions.Input) async throws -> Operations.PasskeyRegistrationOptions.Output {
        let currentPassword = Self.currentPassword(input.body.map { if case .json(let body) = $0 { body } else { nil } } ?? nil)
        let (token, session) = try await authenticate()
        try requireVerifiedAddress(session)
        let options = try await upstreams.identity(IdentityContract.passkeyRegistrationOptions, IdentitySecuredRequest(token: token, currentPassword: currentPassword))
        return .ok(.init(body: .json(options)))
    }

    func registerPasskey(_ input: Operations.RegisterPasskey.Input) async throws -> Operations.RegisterPasskey.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        // A passkey makes a login ask for the second factor: the account's events say so, and cached sessions go.
        let factor = try await changingAccount { token, session in
            try requireVerifiedAddress(session)
            return try await upstreams.identity(IdentityContract.registerPasskey, IdentityRegisterPasskeyRequest(token: token, name: body.name, credential: body.credential))
        }
        return .created(.init(body: .json(Self.factor(factor))))
    }

    func passkeyLoginOptions(_ input: Operations.PasskeyLoginOptions.Input) async throws -> Operations.PasskeyLoginOptions.Output {
        .ok(.init(body: .json(try await upstreams.identity(IdentityContract.passkeyLoginOptions, IdentityPasskeyOptionsRequest()))))
    }

    func passkeyLogIn(_ input: Operations.PasskeyLogIn.Input) async throws -> Operations.PasskeyLogIn.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        let request = IdentityPasskeyLoginRequest(
            credential: body.credential, clientAddress: Self.clientAddress, clientDevice: RequestScope.scope.clientDevice, clientName: Self.clientName
        )
        let session = try await upstreams.identity(IdentityContract.passkeyLogin, request)
        return .ok(.init(body: .json(try Self.accountSession(session))))
    }

    static func currentPassword(_ body: Components.Schemas.SecuredRequest?) -> SecretString? {
        body?.currentPassword.map(SecretString.init)
    }

    static func factor(_ factor: IdentityFactor) -> Components.Schemas.Factor {
        Components.Schemas.Factor(
            id: factor.id, _type: factor.type, name: factor.name, createdAt: factor.createdAt.date,
            lastUsedAt: factor.lastUsedAt?.date, pending: factor.pending, remaining: factor.remaining
        )
    }
}

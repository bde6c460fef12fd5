import Foundation
import KontoContracts
import KontoModel
import KontoWire
import Logging

/// One concern of Identity's operations (sessions, sign-in, second factors, external identities, proofs by mail,
/// account changes, opening, mail, maintenance), each holding only the storage and collaborators it needs;
/// ``IdentityStore`` composes them. What they share comes from here: the context's values, the storage errors'
/// mapping, the event helper and the common refusals.
protocol IdentityPart: Sendable {
    var context: IdentityContext { get }
}

extension IdentityPart {
    var configuration: AccountConfiguration { context.configuration }
    var options: IdentityOptions { context.options }
    var assembler: AccountAssembler { context.assembler }
    var clock: @Sendable () -> Timestamp { context.clock }
    var logger: Logger { context.logger }

    /// A storage call, its failures turned into the service's errors.
    func stored<T>(_ body: () async throws(IdentityStorageError) -> T) async throws(ServiceError) -> T {
        do {
            return try await body()
        } catch {
            throw Self.error(for: error)
        }
    }

    static func error(for error: IdentityStorageError) -> ServiceError {
        switch error.code {
        case .unavailable: .identityStorageUnavailable
        case .notFound: ServiceError(AccountError(code: .notFound))
        case .conflict: ServiceError(AccountError(code: .credentialsTaken))
        case .failure: .identityStorageFailure
        }
    }

    func event(_ accountId: String, _ kind: AccountEvent.Kind, at now: Timestamp) -> AccountEvent {
        AccountEvent(time: now.date, accountId: accountId, kind: kind)
    }

    static var unauthenticated: ServiceError { ServiceError(AccountError(code: .unauthenticated)) }
    static var wrongCredentials: ServiceError { ServiceError(AccountError(code: .wrongCredentials)) }
    static var wrongSecondFactor: ServiceError { ServiceError(AccountError(code: .wrongSecondFactor)) }
    static var passwordTooLong: ServiceError { ServiceError(AccountError(code: .validationFailed, fields: [passwordTooLongField])) }
    static var passwordTooLongField: AccountFieldError {
        AccountFieldError(
            key: PasswordKey.identifier,
            code: .valueTooLarge,
            message: "Use at most \(PasswordHashingPool.maximumPasswordCharacters) characters."
        )
    }
}

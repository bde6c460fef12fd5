import Foundation
import KontoContracts
import KontoModel
import Logging

/// The checks of a new credential every part that takes one applies (sign-up, changes, resets).
extension IdentityPart {
    static var oneSecondFactor: ServiceError {
        ServiceError(AccountError(code: .validationFailed, fields: [
            AccountFieldError(key: "code", code: .missingAccountValue, message: "Give one second factor: a code from the authenticator app, a recovery code, or a passkey."),
        ]))
    }

    static var invalidChallenge: ServiceError { ServiceError(AccountError(code: .invalidChallenge)) }

    /// A new password must pass the configured password rules and the length limit, and not be a common one.
    func checkNewPassword(_ password: SecretString) throws(ServiceError) {
        guard PasswordHashingPool.acceptsLength(of: password) else { throw Self.passwordTooLong }
        try checkValue(.string(password.value), identifier: PasswordKey.identifier)
        if let common = commonPasswordError(password) {
            throw ServiceError(AccountError(code: .validationFailed, fields: [common]))
        }
    }

    /// The field error of a password on the common-password list (ASVS 6.2.4), nil for any other.
    func commonPasswordError(_ password: SecretString) -> AccountFieldError? {
        guard options.commonPasswords.contains(password.value) else { return nil }
        return AccountFieldError(
            key: PasswordKey.identifier,
            code: .commonPassword,
            message: "This password is one of the most common ones, which are guessed first. Choose another."
        )
    }

    func checkUserId(_ userId: String) throws(ServiceError) {
        guard UserIdNormalization.acceptsLength(of: userId) else {
            throw ServiceError(AccountError(code: .validationFailed, fields: [UserIdNormalization.tooLongField]))
        }
        try checkValue(.string(userId), identifier: UserIdKey.identifier)
    }

    /// One credential checked against its configured rules (nonEmpty when it has none).
    func checkValue(_ value: AccountValue, identifier: String) throws(ServiceError) {
        do {
            try configuration.validate(AccountDetails(values: [identifier: value], userIdType: configuration.userIdType), requiring: [identifier])
        } catch {
            throw ServiceError(error)
        }
        if case let .string(string) = value, string.isEmpty {
            throw ServiceError(AccountError(code: .missingAccountValue, fields: [
                AccountFieldError(key: identifier, code: .missingAccountValue, message: "This field is required."),
            ]))
        }
    }
}

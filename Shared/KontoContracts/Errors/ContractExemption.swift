import KontoErrors

/// A (method, error code) pair a contract declares but whose example cannot be recorded, with the reason.
///
/// A method's declared codes are what its implementation can answer with; every pair needs a recorded example that
/// the provider replays, except those listed here. The contract suite accepts a missing example only for a listed
/// pair, and refuses a listed pair that is not declared or that has an example after all.
public struct ContractExemption: Sendable, Hashable, CustomStringConvertible {
    public let method: String
    public let code: KontoErrorCode
    public let reason: String

    public init(_ method: String, _ code: KontoErrorCode, reason: String) {
        self.method = method
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(method) \(code): \(reason)" }
}

extension ContractExemption {
    /// The account vanished between two statements of one request (a concurrent deletion): a replay sends one request
    /// at a time, so no request of it can see its account disappear half-way.
    static func concurrentDeletion(_ method: String) -> ContractExemption {
        ContractExemption(
            method,
            .notFound,
            reason: "only when the account is deleted by another request between two of this one's statements; a replay sends one request at a time"
        )
    }

    /// A credential value that is empty but passes its rules: the contract's configuration (the seed defaults) gives
    /// every credential a rule that refuses empty text first (`account.validationFailed`).
    static func emptyCredentialPassingRules(_ method: String) -> ContractExemption {
        ContractExemption(
            method,
            .missingAccountValue,
            reason: "only for an empty value that passes the key's rules; the contract's configuration refuses empty credentials by rule first (account.validationFailed: identity/13a-change-password-empty, identity/18aa-request-reset-empty)"
        )
    }

    /// Sign-in by emailed code is a deployment's choice (`KONTO_IDENTITY_EMAIL_CODE_LOGIN`); the contract's
    /// configuration offers it, so its refusal where it is off cannot be replayed there.
    static func emailCodeLoginOff(_ method: String) -> ContractExemption {
        ContractExemption(
            method,
            .notFound,
            reason: "only where the deployment does not offer sign-in by emailed code; the contract's configuration offers it (the refusal is tested in IdentityStoreEmailCodeTests)"
        )
    }
}

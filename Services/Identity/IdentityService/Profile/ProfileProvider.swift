import KontoContracts
import KontoModel

/// Where Identity keeps every non-credential key: the Profile service over the wire, or a stand-in in unit tests.
public protocol ProfileProvider: Sendable {
    /// Stores the account's details (Profile validates them again), and answers with what it stored.
    /// - Throws: ``ProfileProviderError``.
    func create(accountId: String, details: AccountDetails) async throws(ProfileProviderError) -> ProfileRecord

    /// Every stored key of the account; nil when Profile holds nothing for it.
    func load(accountId: String) async throws(ProfileProviderError) -> ProfileRecord?

    /// Sets and removes details in one change (an operator's, through Identity: server-owned keys too), at
    /// `expectedVersion` when given; answers the details after it. Profile's refusals (`account.versionConflict`,
    /// `account.validationFailed` …) are ``ProfileProviderError/refused(_:)``.
    func modify(accountId: String, modifications: AccountModifications, expectedVersion: Int64?) async throws(ProfileProviderError) -> ProfileRecord

    /// Removes the account's details; false when there were none. Idempotent.
    func delete(accountId: String) async throws(ProfileProviderError) -> Bool

    /// Why Profile cannot serve Identity now (unreachable, or not ready itself); nil when it can.
    func unreadiness() async -> String?
}

extension ProfileProvider {
    /// A stand-in is always there.
    public func unreadiness() async -> String? { nil }
}

/// A Profile call that did not succeed.
public enum ProfileProviderError: Error, Sendable {
    /// Profile refused the request for what it contains (an account-model error such as a validation failure);
    /// nothing was stored, and the caller should see the refusal.
    case refused(ServiceError)
    /// Profile could not be reached, failed or answered late: the outcome is unknown (a late create may still
    /// commit), so whatever the call may have made must be cleaned up.
    case unavailable

    /// What the caller answers: Profile's refusal as it is, Profile away as the retryable `identity.profileUnavailable`.
    public var serviceError: ServiceError {
        switch self {
        case .refused(let refusal): refusal
        case .unavailable: .identityProfileUnavailable
        }
    }
}

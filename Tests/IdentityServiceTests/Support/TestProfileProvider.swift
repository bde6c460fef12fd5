import IdentityService
import KontoContracts
import KontoModel
import Synchronization

/// Profile as a dictionary, for the store's unit tests (the real service is used over the wire in integration
/// tests). It can be made unavailable, or to commit a create and still report failure, as a late answer does.
final class TestProfileProvider: ProfileProvider {
    enum Mode: Sendable {
        case normal
        /// Every call fails without doing anything (Profile down).
        case unavailable
        /// Creates commit but report failure (Profile answered after the caller's deadline).
        case commitsButAnswersLate
    }

    private struct State {
        var profiles: [String: AccountDetails] = [:]
        var mode: Mode = .normal
        var deletes = 0
    }

    private let state = Mutex(State())

    var mode: Mode {
        get { state.withLock { $0.mode } }
        set { state.withLock { $0.mode = newValue } }
    }

    var profiles: [String: AccountDetails] { state.withLock { $0.profiles } }
    var deletes: Int { state.withLock { $0.deletes } }

    func unreadiness() -> String? {
        mode == .normal ? nil : "profile is unavailable"
    }

    func create(accountId: String, details: AccountDetails) throws(ProfileProviderError) -> ProfileRecord {
        try state.withLock { state throws(ProfileProviderError) in
            switch state.mode {
            case .unavailable:
                throw .unavailable
            case .commitsButAnswersLate:
                state.profiles[accountId] = details
                throw .unavailable
            case .normal:
                guard state.profiles[accountId] == nil else {
                    throw .refused(ServiceError(code: KontoErrorCode.profileAlreadyExists, message: "exists"))
                }
                state.profiles[accountId] = details
                return ProfileRecord(accountId: accountId, details: details, version: 1)
            }
        }
    }

    func load(accountId: String) throws(ProfileProviderError) -> ProfileRecord? {
        try state.withLock { state throws(ProfileProviderError) in
            guard state.mode != .unavailable else { throw .unavailable }
            return state.profiles[accountId].map { ProfileRecord(accountId: accountId, details: $0, version: 1) }
        }
    }

    /// Applies set and remove without validating them (Profile's own tests check its validation).
    func modify(accountId: String, modifications: AccountModifications, expectedVersion: Int64?) throws(ProfileProviderError) -> ProfileRecord {
        try state.withLock { state throws(ProfileProviderError) in
            guard state.mode == .normal else { throw .unavailable }
            guard let current = state.profiles[accountId] else { throw .refused(ServiceError(AccountError(code: .notFound))) }
            var values = current.storedValues
            for key in modifications.remove { values[key] = nil }
            for (key, value) in modifications.set.storedValues { values[key] = value }
            let details = AccountDetails(values: values)
            state.profiles[accountId] = details
            return ProfileRecord(accountId: accountId, details: details, version: 2)
        }
    }

    func delete(accountId: String) throws(ProfileProviderError) -> Bool {
        try state.withLock { state throws(ProfileProviderError) in
            guard state.mode != .unavailable else { throw .unavailable }
            state.deletes += 1
            return state.profiles.removeValue(forKey: accountId) != nil
        }
    }
}

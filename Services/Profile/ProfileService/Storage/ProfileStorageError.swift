/// A storage call that failed. ``description`` is constant per code: driver errors may quote bound values.
public struct ProfileStorageError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// ``ProfileStorage/insert(accountId:values:)`` found an existing record.
        case alreadyExists
        /// The storage cannot be reached right now; retrying later may succeed.
        case unavailable
        /// Anything else: a stored record that cannot be read, an unexpected database error.
        case failure
    }

    public let code: Code
    /// Kept for debugging (`String(reflecting:)`), never shown in ``description``.
    public let underlying: (any Error)?

    public init(_ code: Code, underlying: (any Error)? = nil) {
        self.code = code
        self.underlying = underlying
    }

    public var isRetryable: Bool {
        code == .unavailable
    }

    public var description: String {
        "ProfileStorageError(\(code.rawValue))"
    }
}

extension ProfileStorageError {
    /// `error` as a storage error: itself if it is one, else a call given up on (its deadline passed or its caller
    /// was cancelled), which is `unavailable` and may be retried.
    static func abandoned(_ error: any Error) -> ProfileStorageError {
        error as? ProfileStorageError ?? ProfileStorageError(.unavailable, underlying: error)
    }
}

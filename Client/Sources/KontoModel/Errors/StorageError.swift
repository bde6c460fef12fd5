/// A storage call that failed, the one error of every service's storage (PostgreSQL or memory): Identity's, Profile's
/// and Notifications' storage protocols throw it (each service names it after itself, e.g. `IdentityStorageError`),
/// and each store turns it into its service's codes. ``description`` is constant per code: driver errors may quote
/// bound values, so they are kept only in ``underlying``.
public struct StorageError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// The record (an account, a session, a token) is not there.
        case notFound
        /// A value that must be unique is another record's already (Identity: the normalized userId; Profile: a
        /// record for the account).
        case conflict
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

    /// Whether the same call may succeed later.
    public var isRetryable: Bool { code == .unavailable }

    public var description: String { "StorageError.\(code.rawValue)" }
}

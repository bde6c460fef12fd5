/// A storage call that failed. ``description`` is constant per code: driver errors may quote bound values.
public struct IdentityStorageError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// Another account has this normalized userId.
        case userIdTaken
        /// The account (or session, or token) is not there.
        case notFound
        /// The storage cannot be reached right now; retrying later may succeed.
        case unavailable
        /// Anything else.
        case failure
    }

    public let code: Code
    /// Kept for debugging (`String(reflecting:)`), never shown in ``description``.
    public let underlying: (any Error)?

    public init(_ code: Code, underlying: (any Error)? = nil) {
        self.code = code
        self.underlying = underlying
    }

    public var description: String { "IdentityStorageError.\(code.rawValue)" }
}

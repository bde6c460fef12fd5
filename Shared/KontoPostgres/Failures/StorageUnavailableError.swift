/// The database cannot be reached right now (refused, closed, timed out, shutting down); retrying later may succeed.
///
/// The underlying error is kept for `String(reflecting:)` in debugging, but ``description`` stays constant because
/// driver errors may quote queries and their bound values.
public struct StorageUnavailableError: Error, Sendable, CustomStringConvertible {
    public static let code = "storage.unavailable"

    /// Always true: the condition is transient by definition.
    public var isRetryable: Bool { true }
    /// Why the database is considered unavailable, a constant phrase.
    public let reason: Reason
    public let underlying: (any Error)?

    public enum Reason: String, Sendable, Hashable {
        /// A connection could not be opened or was lost.
        case connectionFailed
        /// The server is shutting down, starting up or out of connection slots.
        case serverUnavailable
        /// The pool gave up opening connections, or was shut down.
        case poolUnavailable
        /// The operation did not finish within its time limit.
        case timedOut
    }

    public init(_ reason: Reason, underlying: (any Error)? = nil) {
        self.reason = reason
        self.underlying = underlying
    }

    public var description: String {
        "\(Self.code): the database is unavailable (\(reason.rawValue))"
    }
}

import Logging
import NIOCore

/// What a method handler knows about the call besides its payload.
public struct WireRequestContext: Sendable {
    public var method: String
    public var requestID: String?
    public var traceParent: String?
    /// When the caller stops waiting; a handler may stop early once it has passed.
    public var deadline: NIODeadline?
    /// The authenticated calling service.
    public var peer: String
    /// Carries `konto.peer`, `konto.method` and `konto.correlation_id`.
    public var logger: Logger
}

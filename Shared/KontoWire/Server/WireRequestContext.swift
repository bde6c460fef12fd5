import Logging
import NIOCore

/// What a method handler knows about the call besides its payload.
public struct WireRequestContext: Sendable {
    public var method: String
    public var requestID: String?
    public var traceParent: String?
    /// When the caller stops waiting. At that moment the caller is answered `wire.deadlineExceeded` and the
    /// handler's task is cancelled; a handler that must finish something (e.g. undo a half-done change) shields it.
    public var deadline: NIODeadline?

    /// The time left before ``deadline``, or nil without one; zero once it has passed. A handler bounds the calls
    /// it makes downstream by it, so they give up when the caller does.
    public var timeRemaining: TimeAmount? {
        deadline.map { max(.zero, $0 - .now()) }
    }
    /// The authenticated calling service.
    public var peer: String
    public var correlationID: UInt64
    var baseLogger: Logger

    /// Carries `konto.peer`, `konto.method` and `konto.correlation_id`. Built on access, so calls
    /// that never log pay nothing for the metadata.
    public var logger: Logger {
        var logger = self.baseLogger
        logger[metadataKey: "konto.method"] = "\(self.method)"
        logger[metadataKey: "konto.correlation_id"] = "\(self.correlationID)"
        return logger
    }
}

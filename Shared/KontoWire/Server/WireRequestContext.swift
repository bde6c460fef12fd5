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

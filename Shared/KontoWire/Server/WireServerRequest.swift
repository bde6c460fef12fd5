import NIOCore

/// A request that passed the connection's checks, on its way to the application.
public struct WireServerRequest: Sendable {
    public var correlationID: UInt64
    public var request: WireRequest
    /// When the caller stops waiting, if it said.
    public var deadline: NIODeadline?
    /// The authenticated peer's service name.
    public var peer: String
}

/// Sent down a server connection's pipeline to start its graceful shutdown (goaway, drain, close).
public struct WireServerShutdownEvent: Sendable {
    public init() {}
}

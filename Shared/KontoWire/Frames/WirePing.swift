/// Heartbeat probe; the peer answers with a pong carrying the same correlation id. Empty body.
public struct WirePing: Sendable, Hashable {
    public init() {}
}

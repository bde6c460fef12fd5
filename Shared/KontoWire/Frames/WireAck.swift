/// Acknowledges the event with the same correlation id. Empty body.
public struct WireAck: Sendable, Hashable {
    public init() {}
}

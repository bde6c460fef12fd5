/// Answer to a ping. Empty body.
public struct WirePong: Sendable, Hashable {
    public init() {}
}

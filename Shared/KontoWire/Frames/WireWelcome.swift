/// Server to client: the handshake succeeded.
public struct WireWelcome: Sendable, Hashable {
    /// The version both sides use from now on.
    public var version: UInt8
    public var serverName: String
    /// The methods this server serves, so a client can fail early on a typo.
    public var methods: [String]
    /// The most requests the server accepts in flight on this connection.
    public var maxInFlight: UInt32
    /// The largest frame length the server accepts.
    public var maxFrameLength: UInt32

    public init(version: UInt8, serverName: String, methods: [String], maxInFlight: UInt32, maxFrameLength: UInt32) {
        self.version = version
        self.serverName = serverName
        self.methods = methods
        self.maxInFlight = maxInFlight
        self.maxFrameLength = maxFrameLength
    }
}

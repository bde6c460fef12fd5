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
    /// The server's proof (``WireHandshake/serverProof(key:transcript:version:serverName:)``): it knows the caller's
    /// key, saw both nonces and both version lists, and chose `version`.
    public var mac: [UInt8]

    public init(version: UInt8, serverName: String, methods: [String], maxInFlight: UInt32, maxFrameLength: UInt32, mac: [UInt8]) {
        self.version = version
        self.serverName = serverName
        self.methods = methods
        self.maxInFlight = maxInFlight
        self.maxFrameLength = maxFrameLength
        self.mac = mac
    }
}

import NIOCore

/// The handshake's first two frames. The server opens with a ``Challenge``; the client answers
/// with a ``ClientHello``. Both travel as kind `hello`, told apart by a stage byte.
public enum WireHello: Sendable, Hashable {
    case challenge(Challenge)
    case clientHello(ClientHello)

    /// Server to client: a fresh random nonce and the versions the server speaks.
    public struct Challenge: Sendable, Hashable {
        public static let nonceSize = 32
        public var nonce: [UInt8]
        public var supportedVersions: [UInt8]

        public init(nonce: [UInt8], supportedVersions: [UInt8] = WireProtocolVersion.supported) {
            self.nonce = nonce
            self.supportedVersions = supportedVersions
        }
    }

    /// Client to server: who is calling, which versions it speaks, its own nonce, and its proof: the transcript's
    /// MAC under the caller's key (``WireHandshake/clientProof(key:transcript:)``).
    public struct ClientHello: Sendable, Hashable {
        public static let macSize = 32
        public var serviceName: String
        public var supportedVersions: [UInt8]
        public var mac: [UInt8]
        /// The client's fresh random nonce, which the server's proof covers: a recorded welcome is no good again.
        public var nonce: [UInt8]

        public init(serviceName: String, supportedVersions: [UInt8] = WireProtocolVersion.supported, mac: [UInt8], nonce: [UInt8]) {
            self.serviceName = serviceName
            self.supportedVersions = supportedVersions
            self.mac = mac
            self.nonce = nonce
        }
    }
}

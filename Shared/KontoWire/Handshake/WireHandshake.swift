import Crypto

/// The pure parts of the challenge–response handshake (docs/PROTOCOL.md, "Handshake").
///
/// Both sides prove the caller's key over the whole handshake: the server's nonce and versions, the caller's name,
/// versions and nonce (the client's proof), and with them the version the server chose and its name (the server's
/// proof). A relay gets nowhere (each proof covers both fresh nonces), a server that does not know the key cannot
/// complete a handshake, and neither side's version list can be altered unnoticed.
public enum WireHandshake {
    /// Everything the two proofs cover, in the order the frames carried it.
    public struct Transcript: Sendable, Hashable {
        public var serverNonce: [UInt8]
        public var serverVersions: [UInt8]
        public var serviceName: String
        public var clientVersions: [UInt8]
        public var clientNonce: [UInt8]

        public init(serverNonce: [UInt8], serverVersions: [UInt8], serviceName: String, clientVersions: [UInt8], clientNonce: [UInt8]) {
            self.serverNonce = serverNonce
            self.serverVersions = serverVersions
            self.serviceName = serviceName
            self.clientVersions = clientVersions
            self.clientNonce = clientNonce
        }

        /// Each field with a 2-byte length first, after a label naming the side: no two transcripts (or a client's
        /// and a server's proof of one) share a MAC input.
        func message(label: String, version: UInt8? = nil, serverName: String? = nil) -> [UInt8] {
            var bytes: [UInt8] = []
            func field(_ value: [UInt8]) {
                bytes.append(UInt8(truncatingIfNeeded: value.count >> 8))
                bytes.append(UInt8(truncatingIfNeeded: value.count))
                bytes.append(contentsOf: value)
            }
            field(Array(label.utf8))
            field(serverNonce)
            field(serverVersions)
            field(Array(serviceName.utf8))
            field(clientVersions)
            field(clientNonce)
            if let version { field([version]) }
            if let serverName { field(Array(serverName.utf8)) }
            return bytes
        }
    }

    static let clientLabel = "konto-wire/2 client"
    static let serverLabel = "konto-wire/2 server"

    /// The client's proof: HMAC-SHA256 of the transcript under the caller's verifier at the server
    /// (``WireSecret/proofKey(caller:server:)``).
    public static func clientProof(key: WireSecret, transcript: Transcript) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: transcript.message(label: clientLabel), using: key.key))
    }

    /// Checks a client's proof in constant time.
    public static func isValidClientProof(_ mac: [UInt8], key: WireSecret, transcript: Transcript) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: transcript.message(label: clientLabel), using: key.key)
    }

    /// The server's proof: the transcript with the chosen version and the server's name, under the same key.
    public static func serverProof(key: WireSecret, transcript: Transcript, version: UInt8, serverName: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: transcript.message(label: serverLabel, version: version, serverName: serverName), using: key.key))
    }

    /// Checks a server's proof in constant time.
    public static func isValidServerProof(_ mac: [UInt8], key: WireSecret, transcript: Transcript, version: UInt8, serverName: String) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(
            mac, authenticating: transcript.message(label: serverLabel, version: version, serverName: serverName), using: key.key
        )
    }

    /// The hello that answers `challenge` of `serverName` as `serviceName`, for peers that drive the handshake by hand (tests, load
    /// generators, fuzzers); ``ClientConnectionStateMachine`` does the same.
    public static func clientHello(
        answering challenge: WireHello.Challenge,
        serviceName: String,
        serverName: String,
        secret: WireSecret,
        supportedVersions: [UInt8] = WireProtocolVersion.supported,
        nonce: [UInt8] = makeNonce()
    ) -> WireHello.ClientHello {
        let transcript = Transcript(
            serverNonce: challenge.nonce, serverVersions: challenge.supportedVersions, serviceName: serviceName,
            clientVersions: supportedVersions, clientNonce: nonce
        )
        let mac = clientProof(key: secret.proofKey(caller: serviceName, server: serverName), transcript: transcript)
        return WireHello.ClientHello(serviceName: serviceName, supportedVersions: supportedVersions, mac: mac, nonce: nonce)
    }

    /// The highest version both sides speak, or nil.
    public static func negotiateVersion(client: [UInt8], server: [UInt8]) -> UInt8? {
        Set(client).intersection(server).max()
    }

    /// A fresh random nonce for a challenge or a client hello.
    public static func makeNonce() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<WireHello.Challenge.nonceSize).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}

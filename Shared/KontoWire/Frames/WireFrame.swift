import NIOCore

/// One protocol frame: the fixed header fields plus a typed message.
///
/// On the wire: `UInt32 length | UInt8 version | UInt8 kind | UInt16 flags | UInt64 correlationID | body`,
/// all big-endian, where `length` counts every byte after itself. See docs/PROTOCOL.md.
public struct WireFrame: Sendable, Hashable {
    /// Size of the length prefix.
    public static let lengthFieldSize = 4
    /// Bytes after the length prefix and before the body: version, kind, flags, correlation id.
    public static let headerSize = 12
    /// The default maximum for the length field (1 MiB).
    public static let defaultMaximumLength = 1 << 20

    public var version: UInt8
    /// Reserved; version 1 senders write 0 and receivers refuse anything else.
    public var flags: UInt16
    /// Matches a response, error or pong to its request or ping. 0 for connection-level frames.
    public var correlationID: UInt64
    public var message: WireMessage

    public init(version: UInt8 = WireProtocolVersion.current, flags: UInt16 = 0, correlationID: UInt64, message: WireMessage) {
        self.version = version
        self.flags = flags
        self.correlationID = correlationID
        self.message = message
    }

    public var kind: WireMessageKind { self.message.kind }
}

/// Protocol versions this implementation speaks.
public enum WireProtocolVersion {
    /// 2: the handshake authenticates both sides over a transcript of both nonces and both version lists, under a
    /// key per calling service (docs/PROTOCOL.md). Version 1 peers are refused `wire.unsupportedVersion`.
    public static let current: UInt8 = 2
    public static let supported: [UInt8] = [2]
}

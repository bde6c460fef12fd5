/// Sizes the protocol bounds, so that no field a peer sends is larger than a receiver expects and no
/// field built from outside data can make an encoder trap.
///
/// Names (methods, request ids, traceparent, service and server names, error codes, topics) are short
/// by nature: a receiver refuses a longer one as malformed, and ``WireClient`` refuses to send one.
/// Text (error messages, goaway reasons) may be long; an encoder cuts it at the `str16` limit, on a
/// character boundary, rather than fail.
public enum WireLimits {
    /// The longest name field, in UTF-8 bytes.
    public static let maximumNameLength = 255
    /// The longest `str16` or `bytes16` field: what its UInt16 length can count.
    public static let maximumShortFieldLength = Int(UInt16.max)
    /// The most entries of a `list8` field.
    public static let maximumByteListCount = Int(UInt8.max)
    /// The most methods a welcome lists.
    public static let maximumMethodCount = Int(UInt16.max)
    /// Subscriptions one connection may have open at once, unless the server says otherwise.
    public static let defaultMaximumSubscriptions = 16
    /// The most credit a server grants one subscription, unless configured otherwise: a client asking for more
    /// gets this much.
    public static let defaultMaximumCredit = 1_024
    /// The longest frame a server reads before the handshake completes, far below the maximum frame length: a
    /// client hello (a name, a version list and a MAC) is a few hundred bytes, and until it is verified the peer
    /// is a stranger. A longer announced length is refused `wire.frameTooLarge` before its body is buffered.
    public static let maximumHandshakeFrameLength = 4 * 1024
}

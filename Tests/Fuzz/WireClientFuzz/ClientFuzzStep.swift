/// The control steps of the client target. A control byte b (0x01...0xEF) means step
/// `(b - 1) % count + 1`; the comments list the argument bytes each one reads.
enum ClientFuzzStep: UInt8, CaseIterable {
    /// flags, method, payload (short strings): a caller sends a request.
    case sendRequest = 1
    /// field, length (3 bytes), unit: a caller sends a request with one long header (method,
    /// request id or traceparent) or a long payload, longer than the limits allow if it likes;
    /// refused as WireClient refuses it.
    case sendLongRequest
    /// pick, id: the timeout of a pending request (or of `id` when none is) fires.
    case requestTimedOut
    case heartbeatDue
    /// kind: the channel reports an error.
    case errorCaught
    case channelInactive
    /// pick, payload: the server answers a pending request with a response.
    case respond
    /// pick, retryable, code, message: the server answers a pending request (or the connection,
    /// for pick 0xFF) with an error.
    case respondWithError
    /// shape, length (3 bytes), unit, pick: a server frame with one field of `length` bytes
    /// (capped at the format's 65,535).
    case bigFrame
    /// pick: the server sends goaway naming a pending id (or 0 / the highest, for some picks).
    case goaway
    /// The connection closes and a new one completes its handshake.
    case newConnection
    /// As newConnection, but the handshake is left to the input.
    case newConnectionAwaitingChallenge
    /// nonce (32 bytes): the server's challenge.
    case challenge
    /// version, name: the server's welcome.
    case welcome

    init(control: UInt8) {
        self.init(rawValue: (control - 1) % UInt8(Self.allCases.count) + 1)!
    }
}

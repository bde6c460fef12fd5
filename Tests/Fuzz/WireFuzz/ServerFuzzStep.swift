/// The control steps of the server target. A control byte b (0x01...0xEF) means step
/// `(b - 1) % count + 1`; the comments list the argument bytes each one reads.
enum ServerFuzzStep: UInt8, CaseIterable {
    /// pick: answer a forwarded request with a response echoing its method and payload.
    case answerEcho = 1
    /// pick: answer with `WireError.unknownMethod` quoting the method, as the dispatcher does.
    case answerErrorQuotingMethod
    /// pick: answer with an error quoting the payload as text, with the payload as details
    /// (a handler rejecting bad input).
    case answerErrorQuotingPayload
    /// pick, id: the deadline of a forwarded request (or of `id` when none is) passes.
    case deadlineExpired
    /// id: an answer for a correlation id that is not in flight.
    case answerUnknownID
    case readRequested
    case gracefulShutdown
    case idleTimeout
    /// shape, length (3 bytes), unit, id: a frame from the client with one field of `length`
    /// bytes (capped at the format's 65,535), sent through the codec and the decoder.
    case bigFrame
    /// The connection closes (in-flight handlers answer `wire.shuttingDown`) and a new one
    /// completes the handshake.
    case newConnection
    /// As newConnection, but the handshake is left to the input's frames.
    case newConnectionAwaitingHello
    /// name: a client hello with a valid MAC for `name` (short string).
    case validHello
    case channelInactive
    /// kind: the channel reports an error (a WireError or some other error).
    case errorCaught
    /// pick, kind: answer with another outcome: twice the payload (maybe over the frame limit), a
    /// WireErrorConvertible quoting it in message and details, cancellation, or an untyped error.
    case answerOther

    init(control: UInt8) {
        self.init(rawValue: (control - 1) % UInt8(Self.allCases.count) + 1)!
    }
}

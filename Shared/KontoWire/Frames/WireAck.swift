/// Client to server: the outcome of the delivery with the same correlation id. Each ack, positive or negative,
/// gives the delivery's subscription one credit back.
///
/// A positive ack has an empty body. A negative one says whether the event may be tried again and why not now.
public struct WireAck: Sendable, Hashable {
    public enum Disposition: Sendable, Hashable {
        /// Processed: never deliver it again to this subscriber's group.
        case processed
        /// Not processed now; deliver it again later (the server decides when).
        case retry(reason: String)
        /// Never processable (a poison event): do not try again (e.g. straight to dead letter).
        case reject(reason: String)
    }

    public var disposition: Disposition

    public init(_ disposition: Disposition = .processed) {
        self.disposition = disposition
    }

    /// The body's first byte for a negative ack.
    enum NegativeCode: UInt8 {
        case retry = 1
        case reject = 2
    }
}

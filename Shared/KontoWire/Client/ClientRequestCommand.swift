import NIOCore

/// What a caller hands a client connection: a request and where its answer goes.
struct ClientRequestCommand: Sendable {
    var request: WireRequest
    var promise: EventLoopPromise<WireResponse>
    var timeout: TimeAmount
}

/// Everything a client connection is asked to do by its callers.
enum ClientCommand: Sendable {
    case request(ClientRequestCommand)
    /// Open a subscription (`request` carries its credit); its events go to `sink`, its id to `opened`.
    case subscribe(WireRequest, sink: ClientConnectionStateMachine.WireDeliverySink, opened: EventLoopPromise<UInt64>)
    case acknowledge(subscriptionID: UInt64, deliveryID: UInt64, disposition: WireAck.Disposition)
    case cancelSubscription(UInt64)
}

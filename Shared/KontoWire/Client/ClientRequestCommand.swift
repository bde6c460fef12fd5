import NIOCore

/// What a caller hands a client connection: a request and where its answer goes.
struct ClientRequestCommand: Sendable {
    var request: WireRequest
    var promise: EventLoopPromise<WireResponse>
    var timeout: TimeAmount
}

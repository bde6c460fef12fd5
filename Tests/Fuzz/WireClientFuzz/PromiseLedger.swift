import KontoWire
import NIOCore
import NIOEmbedded

/// Hands out the request promises of one input and checks the state machine's bookkeeping:
/// each promise completed exactly once, and none left over when the input ends.
final class PromiseLedger {
    private let loop = EmbeddedEventLoop()
    private var open: Set<ObjectIdentifier> = []
    private var created = 0

    func make() -> EventLoopPromise<WireResponse> {
        let promise = self.loop.makePromise(of: WireResponse.self)
        self.open.insert(ObjectIdentifier(promise.futureResult))
        self.created += 1
        return promise
    }

    func succeed(_ promise: EventLoopPromise<WireResponse>, _ response: WireResponse) {
        self.close(promise)
        promise.succeed(response)
    }

    func fail(_ promise: EventLoopPromise<WireResponse>, _ error: WireError) {
        self.close(promise)
        promise.fail(error)
    }

    private func close(_ promise: EventLoopPromise<WireResponse>) {
        precondition(self.open.remove(ObjectIdentifier(promise.futureResult)) != nil, "a request promise was completed twice")
    }

    /// Every promise must have been completed by the state machine's actions.
    func finish() {
        precondition(self.open.isEmpty, "\(self.open.count) of \(self.created) request promise(s) never completed")
        self.loop.run()
        try? self.loop.syncShutdownGracefully()
    }
}

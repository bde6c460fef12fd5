import NIOCore
import Synchronization

/// One subscription as the server-side handler sees it: push events within the credit the client granted, and
/// read the client's acknowledgements.
///
/// Credit comes back when the handler has *read* an outcome from ``outcomes``, not when the ack arrives: so
/// neither the events in flight nor the acks waiting to be read can ever exceed the credit, whatever the client
/// or the handler does. A handler that stops reading outcomes stops being able to push.
///
/// When the subscription ends (the client cancels it, the connection closes, the server shuts down) a waiting or
/// later ``push(topic:payload:)`` throws, and ``outcomes`` finishes after the outcomes already received. Every
/// delivery without an outcome by then was not acknowledged: the application delivers it again (to the group).
public final class WireSubscription: Sendable {
    /// The correlation id of the request that opened the subscription.
    public let id: UInt64
    /// Events this subscription may have unacknowledged at once (the client's grant, capped by the server).
    public let credit: Int

    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var available: Int
        var outcomes: [WireDeliveryOutcome] = []
        var outcomeWaiter: CheckedContinuation<WireDeliveryOutcome?, Never>?
        var pushWaiters: [Waiter] = []
        var nextWaiterID: UInt64 = 0
        var endError: WireError?
    }

    private let state: Mutex<State>
    private let send: @Sendable (String, ByteBuffer) async throws -> UInt64

    /// `send` writes one event on the connection and returns its delivery id; it throws once the subscription is over.
    package init(id: UInt64, credit: Int, send: @escaping @Sendable (String, ByteBuffer) async throws -> UInt64) {
        self.id = id
        self.credit = credit
        self.send = send
        self.state = Mutex(State(available: credit))
    }

    /// Sends one event, waiting while the credit is used up. Returns the delivery id its outcome will carry.
    ///
    /// - Throws: the subscription's end (`wire.connectionClosed`, `wire.shuttingDown`, `wire.cancelled`), or
    ///   `CancellationError` when the calling task is cancelled while waiting.
    public func push(topic: String, payload: ByteBuffer) async throws -> UInt64 {
        try await self.takeCredit()
        return try await self.send(topic, payload)
    }

    /// The client's acks in the order they arrived; finishes when the subscription ends (or the reading task is
    /// cancelled). Read by one task.
    public var outcomes: Outcomes { Outcomes(subscription: self) }

    public struct Outcomes: AsyncSequence, Sendable {
        public typealias Element = WireDeliveryOutcome
        let subscription: WireSubscription

        public func makeAsyncIterator() -> Iterator { Iterator(subscription: self.subscription) }

        public struct Iterator: AsyncIteratorProtocol {
            let subscription: WireSubscription
            public mutating func next() async -> WireDeliveryOutcome? {
                await self.subscription.nextOutcome()
            }
        }
    }

    /// The outcomes already received and not read yet, at most `max`, without waiting (each gives its credit back):
    /// for settling them in one batch after ``outcomes`` returned one.
    public func takeReadyOutcomes(max: Int) -> [WireDeliveryOutcome] {
        let (outcomes, pushers): ([WireDeliveryOutcome], [Waiter]) = self.state.withLock { state in
            let count = min(max, state.outcomes.count)
            guard count > 0 else { return ([], []) }
            let taken = Array(state.outcomes.prefix(count))
            state.outcomes.removeFirst(count)
            var pushers: [Waiter] = []
            for _ in 0..<count {
                if let pusher = Self.returnCredit(&state) { pushers.append(pusher) }
            }
            return (taken, pushers)
        }
        for pusher in pushers {
            pusher.continuation.resume()
        }
        return outcomes
    }

    // MARK: Driven by the connection, on its event loop

    /// The client's outcome for one of this subscription's deliveries.
    package func deliver(_ outcome: WireDeliveryOutcome) {
        let resume: (CheckedContinuation<WireDeliveryOutcome?, Never>, Waiter?)? = self.state.withLock { state in
            guard state.endError == nil else { return nil }
            guard let waiter = state.outcomeWaiter else {
                state.outcomes.append(outcome)
                return nil
            }
            state.outcomeWaiter = nil
            return (waiter, Self.returnCredit(&state))
        }
        if let (reader, pusher) = resume {
            reader.resume(returning: outcome)
            pusher?.continuation.resume()
        }
    }

    /// The subscription is over: pushes fail with `error`, outcomes finish once the buffered ones are read.
    package func end(_ error: WireError) {
        let (reader, pushers): (CheckedContinuation<WireDeliveryOutcome?, Never>?, [Waiter]) = self.state.withLock { state in
            guard state.endError == nil else { return (nil, []) }
            state.endError = error
            let pushers = state.pushWaiters
            state.pushWaiters.removeAll()
            // A waiting reader has read everything buffered already.
            let reader = state.outcomeWaiter
            state.outcomeWaiter = nil
            return (reader, pushers)
        }
        reader?.resume(returning: nil)
        for pusher in pushers {
            pusher.continuation.resume(throwing: error)
        }
    }

    // MARK: Credit

    /// One credit back (an outcome was read); hands it straight to the oldest waiting push, if any.
    private static func returnCredit(_ state: inout State) -> Waiter? {
        if state.pushWaiters.isEmpty {
            state.available += 1
            return nil
        }
        return state.pushWaiters.removeFirst()
    }

    private func takeCredit() async throws {
        let waiterID = self.state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: Result<Void, any Error>? = self.state.withLock { state in
                    if let error = state.endError { return .failure(error) }
                    // Checked under the lock: a cancellation handler that ran before this found no waiter to resume.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.available > 0 {
                        state.available -= 1
                        return .success(())
                    }
                    state.pushWaiters.append(Waiter(id: waiterID, continuation: continuation))
                    return nil
                }
                if let immediate {
                    continuation.resume(with: immediate)
                }
            }
        } onCancel: {
            let waiter = self.state.withLock { state -> Waiter? in
                guard let index = state.pushWaiters.firstIndex(where: { $0.id == waiterID }) else { return nil }
                return state.pushWaiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    private func nextOutcome() async -> WireDeliveryOutcome? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<WireDeliveryOutcome?, Never>) in
                let (immediate, pusher): (WireDeliveryOutcome??, Waiter?) = self.state.withLock { state in
                    if !state.outcomes.isEmpty {
                        let outcome = state.outcomes.removeFirst()
                        return (.some(outcome), Self.returnCredit(&state))
                    }
                    if state.endError != nil || Task.isCancelled { return (.some(nil), nil) }
                    state.outcomeWaiter = continuation
                    return (nil, nil)
                }
                if let immediate {
                    continuation.resume(returning: immediate)
                }
                pusher?.continuation.resume()
            }
        } onCancel: {
            let reader = self.state.withLock { state in
                let reader = state.outcomeWaiter
                state.outcomeWaiter = nil
                return reader
            }
            reader?.resume(returning: nil)
        }
    }
}

/// The client's answer to one delivery.
public struct WireDeliveryOutcome: Sendable, Hashable {
    public var deliveryID: UInt64
    public var disposition: WireAck.Disposition

    public init(deliveryID: UInt64, disposition: WireAck.Disposition) {
        self.deliveryID = deliveryID
        self.disposition = disposition
    }
}

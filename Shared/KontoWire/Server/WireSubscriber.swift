import NIOCore

/// A ``WireSubscription`` whose events are `Event`s, sent as JSON.
public struct WireSubscriber<Event: Encodable & Sendable>: Sendable {
    public let subscription: WireSubscription

    public init(subscription: WireSubscription) {
        self.subscription = subscription
    }

    /// Sends `event` on `topic` once there is credit; returns its delivery id.
    public func push(_ event: Event, topic: String) async throws -> UInt64 {
        try await self.subscription.push(topic: topic, payload: try WirePayloadCodec.encode(event))
    }

    public var outcomes: WireSubscription.Outcomes { self.subscription.outcomes }
    public var credit: Int { self.subscription.credit }
}

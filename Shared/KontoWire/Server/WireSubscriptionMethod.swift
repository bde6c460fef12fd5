/// A subscription method's name and types, declared once and used by both the server (`registerSubscription`) and
/// the client (`subscribe`): the request that opens it and the events it carries.
public struct WireSubscriptionMethod<Request: Codable & Sendable, Event: Codable & Sendable>: Sendable, Hashable {
    public let name: String

    public init(_ name: String, request: Request.Type = Request.self, event: Event.Type = Event.self) {
        self.name = name
    }
}

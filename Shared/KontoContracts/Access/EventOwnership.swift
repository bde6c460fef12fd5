import KontoModel
import KontoWire

/// Who owns what on Notifications (docs/PROTOCOL.md, "Who may call what"): each event type belongs to the one service
/// that publishes it, each consumer group to the caller that declared it. Another service cannot publish
/// `deletingAccount` or `mailRequested`, nor subscribe to, replay or read the dead letters of a group it did not
/// declare; either is answered `wire.forbidden`.
public struct EventOwnership: Sendable {
    /// Type name → the only caller that may publish it; nil: anyone may publish anything (in-process tests of the
    /// service's own behaviour).
    public var publishers: [String: String]?
    /// Whether a group belongs to the caller that declared it.
    public var groupsOwned: Bool

    public init(publishers: [String: String]?, groupsOwned: Bool) {
        self.publishers = publishers
        self.groupsOwned = groupsOwned
    }

    /// Profile publishes `detailsChanged`; Identity every other type.
    public static let konto = EventOwnership(
        publishers: Dictionary(uniqueKeysWithValues: NotificationsContract.eventTypes.map { name in
            (name, name == "detailsChanged" ? ProfileContract.serviceName : IdentityContract.serviceName)
        }),
        groupsOwned: true
    )

    /// No ownership: for tests that publish and consume every type from one client.
    public static let open = EventOwnership(publishers: nil, groupsOwned: false)

    /// Whether `caller` may publish an event of type `name`.
    public func mayPublish(_ name: String, caller: String) -> Bool {
        guard let publishers else { return true }
        return publishers[name] == caller
    }
}

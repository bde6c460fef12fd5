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
    /// Caller (or the operators' family, ``WireAllowList/operators``) → the event types its groups may hold; a caller
    /// not named reads none. Nil: any caller reads any type. Notifications' own groups (its courier, the webhooks) are
    /// not checked here.
    public var readers: [String: Set<String>]?

    public init(publishers: [String: String]?, groupsOwned: Bool, readers: [String: Set<String>]? = nil) {
        self.publishers = publishers
        self.groupsOwned = groupsOwned
        self.readers = readers
    }

    /// The event types mailed secrets and addresses travel in (a mail's values, a reset's link): Notifications' own
    /// courier and the deployment's mailer webhook read them, no service's group.
    public static let mailTypes: Set<String> = ["mailRequested", "passwordResetRequested"]

    /// Profile publishes `detailsChanged`; Identity every other type.
    public static let konto = EventOwnership(
        publishers: Dictionary(uniqueKeysWithValues: NotificationsContract.eventTypes.map { name in
            (name, name == "detailsChanged" ? ProfileContract.serviceName : IdentityContract.serviceName)
        }),
        groupsOwned: true,
        readers: [
            // Profile removes a deleted account's details; nothing else is its to read.
            ProfileContract.serviceName: ["deletingAccount"],
            WireAllowList.operators: NotificationsContract.eventTypes.subtracting(mailTypes),
        ]
    )

    /// No ownership: for tests that publish and consume every type from one client.
    public static let open = EventOwnership(publishers: nil, groupsOwned: false)

    /// The types `caller`'s groups may hold (empty: none); nil where every type is open to it.
    public func readable(by caller: String) -> Set<String>? {
        guard let readers else { return nil }
        if let types = readers[caller] { return types }
        if caller.hasPrefix("operator-"), let types = readers[WireAllowList.operators] { return types }
        return []
    }

    /// Whether `caller` may publish an event of type `name`.
    public func mayPublish(_ name: String, caller: String) -> Bool {
        guard let publishers else { return true }
        return publishers[name] == caller
    }
}

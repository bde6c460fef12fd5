import KontoContracts
import KontoWire
import Testing

/// Who may call what (issue 28, item 5), pinned as a table: a change to a service's allow-list shows here and in
/// docs/PROTOCOL.md ("Who may call what").
@Suite("Wire allow-lists")
struct WireAllowListTests {
    static let callers = ["gateway", "identity", "profile", "notifications", "operator-billing", "operator-", "konto-health", "intruder"]

    /// The methods of one server and, for each, exactly the callers that may call it.
    static let expected: [(list: WireAuthorization, methods: [String: Set<String>])] = {
        let everyone = Set(callers)
        var identity: [String: Set<String>] = [HealthContract.check.name: everyone]
        for method in IdentityContract.methods where method != HealthContract.check.name { identity[method] = ["gateway"] }
        let profile: [String: Set<String>] = [
            HealthContract.check.name: everyone,
            ProfileContract.create.name: ["identity"],
            ProfileContract.load.name: ["gateway", "identity", "operator-billing"],
            ProfileContract.modify.name: ["gateway", "identity", "operator-billing"],
            ProfileContract.delete.name: ["identity"],
        ]
        let notifications: [String: Set<String>] = [
            HealthContract.check.name: everyone,
            NotificationsContract.publish.name: ["identity", "profile"],
            NotificationsContract.declareGroup.name: ["profile", "operator-billing"],
            NotificationsContract.subscribe.name: ["profile", "operator-billing"],
            NotificationsContract.feed.name: ["gateway"],
            NotificationsContract.accountHistory.name: ["gateway"],
            NotificationsContract.tailCursor.name: ["gateway"],
            NotificationsContract.tail.name: ["gateway"],
            NotificationsContract.tailBarrier.name: ["gateway"],
            NotificationsContract.deadLetters.name: ["operator-billing"],
            NotificationsContract.replayDeadLetters.name: ["operator-billing"],
            NotificationsContract.replay.name: ["operator-billing"],
            NotificationsContract.failedDeliveries.name: ["gateway"],
            NotificationsContract.redeliver.name: ["gateway"],
            NotificationsContract.webhookEndpoints.name: ["gateway"],
            NotificationsContract.addWebhookEndpoint.name: ["gateway"],
            NotificationsContract.removeWebhookEndpoint.name: ["gateway"],
        ]
        return [(WireAllowList.identity, identity), (WireAllowList.profile, profile), (WireAllowList.notifications, notifications)]
    }()

    @Test("each server lets exactly the listed callers call each of its methods")
    func table() {
        for (list, methods) in Self.expected {
            for (method, allowed) in methods {
                let actual = Set(Self.callers.filter { list.allows(peer: $0, method: method) })
                #expect(actual == allowed, "\(method)")
            }
        }
    }

    @Test("no list names a method its server does not serve, and the table covers every method each serves")
    func onlyServedMethods() {
        let served = [IdentityContract.methods, ProfileContract.methods, NotificationsContract.methods]
        for ((list, methods), all) in zip(Self.expected, served) {
            #expect(Set(methods.keys) == Set(all))
            for (_, named) in list.rules {
                #expect(named.isSubset(of: Set(methods.keys)), "\(named.subtracting(methods.keys))")
            }
        }
    }
}

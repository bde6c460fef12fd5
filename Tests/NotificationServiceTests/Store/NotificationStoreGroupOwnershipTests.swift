import KontoContracts
import KontoModel
import KontoWire
import Logging
@testable import NotificationService
import Testing

/// Whose a consumer group is, under the deployment's ownership (``EventOwnership/konto``): a caller's groups carry
/// its name, so no caller takes a name Notifications or another service declares later (issue 69, 9).
@Suite("Notifications: consumer groups are named after their owner")
struct NotificationStoreGroupOwnershipTests {
    static func code(_ body: () async throws(ServiceError) -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch {
            return error.code.rawValue
        }
    }

    static let forbidden = WireError.Code.forbidden.rawValue

    @Test("each caller declares groups named <caller>.…, never Notifications' own (mail, webhook:…) nor another's; a group owned from before the rule stays its owner's", arguments: NotificationStorageKind.allCases)
    func prefixes(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage in
            let store = NotificationStore(storage: storage, ownership: .konto, logger: Logger(label: "test.notifications.groups"))
            func declare(_ group: String, _ types: [String]?, as caller: String?) async -> String? {
                await Self.code { () async throws(ServiceError) in _ = try await store.declareGroup(NotificationsSubscribeRequest(group: group, types: types), caller: caller) }
            }
            // Squatting on the courier's group, a webhook's or another caller's: refused before anything is stored.
            for name in [NotificationsContract.mailGroup, "webhook:crm", "operator-billing.deletions", "deletions", "profile", "profiled.deletions"] {
                #expect(await declare(name, ["deletingAccount"], as: ProfileContract.serviceName) == Self.forbidden, "\(name)")
                #expect(try await storage.groupOwner(name) == nil, "\(name) was not created")
            }
            for name in ["profile.deletions", "operator-billingx.ledger", "operator-billing", "ledger"] {
                #expect(await declare(name, ["deletingAccount"], as: "operator-billing") == Self.forbidden, "\(name)")
            }
            // Its own names, and Notifications' own where the caller is Notifications itself (nil).
            #expect(await declare("profile.deletions", ["deletingAccount"], as: ProfileContract.serviceName) == nil)
            #expect(await declare("operator-billing.ledger", ["deletingAccount", "accountDisabled"], as: "operator-billing") == nil)
            #expect(await declare(NotificationsContract.mailGroup, ["mailRequested"], as: nil) == nil)
            #expect(try await storage.groupOwner("profile.deletions") == .some(ProfileContract.serviceName))
            // The name is checked before the types: Profile's own name for what it may not read is still refused.
            #expect(await declare("profile.resets", ["passwordResetRequested"], as: ProfileContract.serviceName) == Self.forbidden)

            // Declared before names carried owners: the owner keeps using it, no one else gets it, and one without an
            // owner is no longer for the taking.
            _ = try await storage.ensureGroup("billing", types: ["accountDisabled"], owner: "operator-billing", at: .now)
            _ = try await storage.ensureGroup("orphan", types: ["deletingAccount"], owner: nil, at: .now)
            #expect(await declare("billing", ["accountDisabled"], as: "operator-billing") == nil)
            #expect(await declare("billing", ["accountDisabled"], as: "operator-crm") == Self.forbidden)
            #expect(await declare("orphan", ["deletingAccount"], as: ProfileContract.serviceName) == Self.forbidden)
            #expect(try await storage.groupOwner("orphan") == .some(nil))
        }
    }

    @Test("without owned groups (a single test client publishing and consuming everything) any name is anyone's")
    func open() async throws {
        let store = NotificationStore(storage: InMemoryNotificationStorage(), ownership: .open, logger: Logger(label: "test.notifications.groups"))
        #expect(try await store.declareGroup(NotificationsSubscribeRequest(group: "mail", types: nil), caller: ProfileContract.serviceName).created)
    }
}

import KontoContracts
import KontoTesting
import Testing

/// The provider side of the Notifications contract: a running Notifications answers every recorded request, and
/// delivers every recorded subscription's events, exactly as recorded, in order, over the wire, on either storage.
@Suite("Notifications contract, provider side", .timeLimit(.minutes(2)))
struct NotificationsContractProviderTests {
    @Test("the service answers every example as recorded", arguments: NotificationStorageKind.allCases)
    func answersAsRecorded(kind: NotificationStorageKind) async throws {
        let examples = try ContractExample.load(service: "notifications", contractVersion: NotificationsContract.version)
        let differences = try await NotificationServiceHarness.withService(kind) { running in
            let client = running.client()
            return try await NotificationServiceHarness.with(client) {
                try await ContractExample.replay(examples, on: client)
            }
        }
        #expect(differences.isEmpty, "\(differences)")
    }
}

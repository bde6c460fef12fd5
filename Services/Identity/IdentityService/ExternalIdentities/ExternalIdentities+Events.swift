import Crypto
import Foundation
import KontoContracts
import KontoModel
import Logging

extension ExternalIdentities {
    /// A linked identity's event, and the mail telling the owner of the new way in (ASVS 5.0 6.3.7), in its
    /// transaction: an identity linked by the owner, or automatically by its verified address.
    func identityLinkedEvents(
        _ accountId: String, _ identity: StoredExternalIdentity, _ provider: IdentityProvider, address: String?, automatic: Bool, at now: Timestamp
    ) -> [AccountEvent] {
        let mail = mail.mailEvent(
            accountId, to: address, .identityLinked, values: ["provider": provider.displayName, "automatic": automatic ? "true" : "false"], at: now
        )
        return [event(accountId, .identityLinked(identityId: identity.id, provider: provider.name), at: now), mail].compactMap { $0 }
    }
}

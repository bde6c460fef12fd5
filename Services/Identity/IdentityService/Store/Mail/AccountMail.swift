import KontoContracts
import KontoModel

/// What Identity mails, as `mailRequested` events in the outbox (Notifications' courier sends them): the message
/// for a change in the change's own transaction, the verification links, the notice of a sign-in from a new client,
/// and the hourly allowances that keep a mailbox from being flooded.
struct AccountMail: IdentityPart {
    let context: IdentityContext
    let storage: any IdentityStorage
    let profile: any ProfileProvider
    /// Seals each reset token into its event for the delivering channel.
    let resetTokenSeal: ResetTokenSeal
    let sessions: SessionAuthority
}

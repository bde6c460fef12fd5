import KontoContracts
import KontoModel

/// Opening accounts: password sign-up, anonymous accounts, and the one opening (``AccountOpening``) that password
/// and provider sign-ups and both anonymous upgrades go through.
struct AccountOpener: IdentityPart {
    let context: IdentityContext
    let storage: any IdentityStorage
    let profile: any ProfileProvider
    let sessions: SessionAuthority
    let mail: AccountMail
    /// Seals a provider's refresh token into the identity an external sign-up links.
    let providerTokens: ProviderTokenBox
}

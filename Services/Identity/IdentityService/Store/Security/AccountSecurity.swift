import KontoContracts
import KontoModel

/// The signed-in owner's security-related changes: the password, the userId, and the account's deletion.
struct AccountSecurity: IdentityPart {
    let context: IdentityContext
    let storage: any CredentialStorage
    let profile: any ProfileProvider
    let sessions: SessionAuthority
    let factors: SecondFactors
    let mail: AccountMail
}

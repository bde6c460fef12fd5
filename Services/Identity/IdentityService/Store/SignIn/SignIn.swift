import KontoContracts
import KontoModel

/// Signing in: the password login (throttled, one trip to the storage), the second step with a factor, passkeys as
/// the only factor, and what every sign-in ends with (the details from Profile, a session, the client remembered).
struct SignIn: IdentityPart {
    let context: IdentityContext
    let storage: any IdentityStorage
    let profile: any ProfileProvider
    let sessions: SessionAuthority
    let factors: SecondFactors
    let mail: AccountMail
}

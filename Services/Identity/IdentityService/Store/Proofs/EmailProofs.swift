import KontoContracts
import KontoModel

/// What proves an account's address by mail: verification links, sign-in codes and password resets, and what the
/// first proof ends (docs/IDENTITY.md, "Pre-hijacked accounts").
struct EmailProofs: IdentityPart {
    let context: IdentityContext
    let storage: any IdentityStorage
    let profile: any ProfileProvider
    let sessions: SessionAuthority
    let signIn: SignIn
    let mail: AccountMail
    /// Keys sign-in codes' digests.
    let factorSecrets: FactorSecretBox
    /// What answers do not wait for (a sign-in code's mail).
    let pendingWork: PendingWork
}

import KontoContracts
import KontoModel

/// Signing in with external identity providers (Sign in with Apple, OpenID Connect): verifying their tokens, linking
/// and unlinking identities, provider sign-ups, and revoking the provider tokens of deleted accounts.
struct ExternalIdentities: IdentityPart {
    let context: IdentityContext
    let storage: any IdentityStorage
    /// The configured external identity providers, and Konto as their client.
    let providers: ProviderClient
    /// Seals provider refresh tokens and pending external sign-ups.
    let providerTokens: ProviderTokenBox
    let sessions: SessionAuthority
    let signIn: SignIn
    let factors: SecondFactors
    let opener: AccountOpener
    let mail: AccountMail
}

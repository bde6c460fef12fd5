import KontoContracts
import KontoModel

/// Second factors: TOTP authenticators, recovery codes and passkeys (enrolment, removal, verification, the lock after
/// wrong answers), the challenge a login's first factor gets, reauthentication and the gate of security-related
/// operations.
struct SecondFactors: IdentityPart {
    let context: IdentityContext
    // Audit: a refused passkey is recorded against its account (passkeyDenied).
    let storage: any FactorStorage & CredentialStorage & AuditStorage
    /// Seals TOTP secrets for storage and keys passkey challenges and recovery codes' digests.
    let factorSecrets: FactorSecretBox
    let sessions: SessionAuthority
    let mail: AccountMail
}

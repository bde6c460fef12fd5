/// Why a passkey's registration or assertion was refused: a stable code and a detail that names the check (never a
/// key or a signature). Registration answers with it (the caller is the account's owner, setting a passkey up);
/// a login answers only "wrong credentials" and logs the code.
public struct WebAuthnError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// Not the shape WebAuthn defines (bad base64url, CBOR, JSON, lengths, trailing bytes).
        case malformed
        /// Larger than any real authenticator sends; refused before it is decoded.
        case tooLarge
        /// A COSE algorithm or key type Konto does not verify (ES256, EdDSA, RS256 and PS256 are verified).
        case unsupportedAlgorithm
        /// An attestation format other than `none` and `packed` self-attestation.
        case unsupportedAttestation
        /// The attestation statement does not match or does not verify.
        case invalidAttestation
        /// `webauthn.create` answered where `webauthn.get` was asked, or the other way round.
        case wrongType
        /// Signed over another challenge than the one issued.
        case wrongChallenge
        /// Made on a page of an origin the deployment does not list.
        case wrongOrigin
        /// Scoped to another relying party (its RP ID hash).
        case wrongRelyingParty
        /// The authenticator did not see the user (UP flag unset).
        case userNotPresent
        /// The authenticator did not verify the user (UV flag unset) where that is required.
        case userNotVerified
        /// The signature does not verify with the credential's public key.
        case invalidSignature
        /// The authenticator's counter did not grow: a cloned authenticator, or a replay.
        case signCountRegression
    }

    public var code: Code
    public var detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "webauthn.\(code.rawValue): \(detail)" }
}

import Crypto

/// Verifies passkey registrations and assertions (WebAuthn level 2, §7.1 and §7.2) for one relying party: the
/// client data's type, challenge and origin, the authenticator data's RP ID hash and flags, the attestation
/// (`none`, or `packed` self-attestation signed by the new credential's own key) and assertion signatures with
/// the stored key, and the signature counter. Pure: the caller finds the challenge and the stored credential.
///
/// Why by hand: no WebAuthn package is in the mirror. The tests check it against other libraries' published
/// fixtures (SimpleWebAuthn's, py_webauthn's), hostile inputs each refused with its code, and fuzzing.
public struct WebAuthnVerifier: Sendable {
    public struct RelyingParty: Sendable, Equatable {
        /// The RP ID: the deployment's registrable domain (`example.org`), `localhost` in development.
        public var id: String
        /// Shown by the authenticator next to the account.
        public var name: String
        /// The web origins (`https://example.org`) whose pages may use the passkeys; compared exactly.
        public var origins: [String]

        public init(id: String, name: String, origins: [String]) {
            self.id = id
            self.name = name
            self.origins = origins
        }
    }

    public struct Registration: Sendable {
        public var credentialId: [UInt8]
        /// The COSE public key as the authenticator encoded it.
        public var publicKey: [UInt8]
        public var algorithm: COSEKey.Algorithm
        public var signCount: UInt32
        public var aaguid: [UInt8]
        public var userVerified: Bool
        public var backupEligible: Bool
        public var backedUp: Bool
        public var attestationFormat: String
    }

    public struct Assertion: Sendable {
        public var signCount: UInt32
        public var userVerified: Bool
        public var backedUp: Bool
    }

    /// Bounds checked before anything is decoded: a real authenticator's messages are a few hundred bytes.
    public static let maximumClientDataBytes = 8 * 1_024
    public static let maximumAttestationObjectBytes = 16 * 1_024
    public static let maximumAuthenticatorDataBytes = 4 * 1_024
    public static let maximumSignatureBytes = 1_024

    public let relyingParty: RelyingParty
    private let rpIdHash: [UInt8]

    public init(relyingParty: RelyingParty) {
        self.relyingParty = relyingParty
        rpIdHash = Array(SHA256.hash(data: Array(relyingParty.id.utf8)))
    }

    /// The challenge a client data JSON claims to answer, to find what was issued; verified again by the checks.
    public static func challenge(inClientData clientDataJSON: [UInt8]) throws(WebAuthnError) -> [UInt8] {
        try bounded(clientDataJSON, maximum: maximumClientDataBytes, "clientDataJSON")
        return try Base64URL.decode(CollectedClientData.decode(clientDataJSON).challenge, "the client data's challenge")
    }

    /// Verifies a new credential's registration (`navigator.credentials.create`) against the challenge issued.
    public func verifyRegistration(
        clientDataJSON: [UInt8],
        attestationObject: [UInt8],
        expectedChallenge: [UInt8],
        requireUserVerification: Bool
    ) throws(WebAuthnError) -> Registration {
        try Self.bounded(clientDataJSON, maximum: Self.maximumClientDataBytes, "clientDataJSON")
        try Self.bounded(attestationObject, maximum: Self.maximumAttestationObjectBytes, "attestationObject")
        try checkClientData(clientDataJSON, type: "webauthn.create", challenge: expectedChallenge)

        let object: CBORValue
        do {
            object = try CBORDecoder.decode(attestationObject)
        } catch {
            throw WebAuthnError(.malformed, "attestationObject: \(error)")
        }
        guard let format = object["fmt"]?.text, let statement = object["attStmt"], case .map(let statementEntries) = statement,
              let authenticatorBytes = object["authData"]?.bytes
        else { throw WebAuthnError(.malformed, "attestationObject needs fmt, attStmt and authData") }
        let authenticatorData = try AuthenticatorData(authenticatorBytes)
        try checkAuthenticatorData(authenticatorData, requireUserVerification: requireUserVerification)
        guard let credential = authenticatorData.attestedCredential else {
            throw WebAuthnError(.malformed, "a registration's authenticator data without the attested credential")
        }

        switch format {
        case "none":
            guard statementEntries.isEmpty else { throw WebAuthnError(.invalidAttestation, "a `none` attestation with a statement") }
        case "packed":
            guard statement["x5c"] == nil, statement["ecdaaKeyId"] == nil else {
                // Full attestation names the authenticator's maker; Konto asks for none and has no trust anchors.
                throw WebAuthnError(.unsupportedAttestation, "packed attestation with a certificate is not accepted (Konto asks for none)")
            }
            guard let algorithm = statement["alg"]?.int, let signature = statement["sig"]?.bytes else {
                throw WebAuthnError(.invalidAttestation, "a packed statement needs alg and sig")
            }
            guard algorithm == credential.publicKey.algorithm.rawValue else {
                throw WebAuthnError(.invalidAttestation, "the self-attestation's algorithm is not the credential's")
            }
            let signed = authenticatorBytes + Array(SHA256.hash(data: clientDataJSON))
            guard signature.count <= Self.maximumSignatureBytes, credential.publicKey.isValidSignature(signature, for: signed) else {
                throw WebAuthnError(.invalidAttestation, "the self-attestation's signature does not verify")
            }
        default:
            throw WebAuthnError(.unsupportedAttestation, "attestation format \(format.prefix(32)) is not accepted")
        }

        return Registration(
            credentialId: credential.credentialId,
            publicKey: credential.publicKeyBytes,
            algorithm: credential.publicKey.algorithm,
            signCount: authenticatorData.signCount,
            aaguid: credential.aaguid,
            userVerified: authenticatorData.flags.contains(.userVerified),
            backupEligible: authenticatorData.flags.contains(.backupEligible),
            backedUp: authenticatorData.flags.contains(.backedUp),
            attestationFormat: format
        )
    }

    /// Verifies an assertion (`navigator.credentials.get`) with the stored credential.
    ///
    /// - Parameter storedSignCount: the counter last seen; a counter that does not grow is refused, unless both are
    ///   zero (authenticators that keep no counter, as synced passkeys do).
    public func verifyAssertion(
        clientDataJSON: [UInt8],
        authenticatorData authenticatorBytes: [UInt8],
        signature: [UInt8],
        expectedChallenge: [UInt8],
        publicKey: COSEKey,
        storedSignCount: UInt32,
        requireUserVerification: Bool
    ) throws(WebAuthnError) -> Assertion {
        try Self.bounded(clientDataJSON, maximum: Self.maximumClientDataBytes, "clientDataJSON")
        try Self.bounded(authenticatorBytes, maximum: Self.maximumAuthenticatorDataBytes, "authenticatorData")
        try Self.bounded(signature, maximum: Self.maximumSignatureBytes, "signature")
        try checkClientData(clientDataJSON, type: "webauthn.get", challenge: expectedChallenge)
        let authenticatorData = try AuthenticatorData(authenticatorBytes)
        try checkAuthenticatorData(authenticatorData, requireUserVerification: requireUserVerification)
        let signed = authenticatorBytes + Array(SHA256.hash(data: clientDataJSON))
        guard publicKey.isValidSignature(signature, for: signed) else {
            throw WebAuthnError(.invalidSignature, "the assertion's signature does not verify with the passkey's key")
        }
        let count = authenticatorData.signCount
        if count != 0 || storedSignCount != 0, count <= storedSignCount {
            throw WebAuthnError(.signCountRegression, "signature counter \(count) after \(storedSignCount)")
        }
        return Assertion(
            signCount: count,
            userVerified: authenticatorData.flags.contains(.userVerified),
            backedUp: authenticatorData.flags.contains(.backedUp)
        )
    }

    private func checkClientData(_ bytes: [UInt8], type: String, challenge expected: [UInt8]) throws(WebAuthnError) {
        let clientData = try CollectedClientData.decode(bytes)
        guard clientData.type == type else {
            throw WebAuthnError(.wrongType, "client data of type \(clientData.type.prefix(32)) where \(type) was asked")
        }
        let challenge = try Base64URL.decode(clientData.challenge, "the client data's challenge")
        guard constantTimeEqual(challenge, expected) else {
            throw WebAuthnError(.wrongChallenge, "signed over another challenge than the one issued")
        }
        guard relyingParty.origins.contains(clientData.origin) else {
            throw WebAuthnError(.wrongOrigin, "origin \(clientData.origin.prefix(200)) is not one of the deployment's")
        }
        guard clientData.crossOrigin != true else {
            throw WebAuthnError(.wrongOrigin, "made in a cross-origin frame")
        }
    }

    private func checkAuthenticatorData(_ data: AuthenticatorData, requireUserVerification: Bool) throws(WebAuthnError) {
        guard constantTimeEqual(data.rpIdHash, rpIdHash) else {
            throw WebAuthnError(.wrongRelyingParty, "scoped to another RP ID than \(relyingParty.id)")
        }
        guard data.flags.contains(.userPresent) else { throw WebAuthnError(.userNotPresent, "the user was not present (UP)") }
        guard !requireUserVerification || data.flags.contains(.userVerified) else {
            throw WebAuthnError(.userNotVerified, "the authenticator did not verify the user (UV)")
        }
    }

    /// Compares every byte (only the lengths, which are not secret, end it early): a challenge compared so tells
    /// nothing of where a guess first differs.
    private func constantTimeEqual(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else { return false }
        return zip(left, right).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private static func bounded(_ bytes: [UInt8], maximum: Int, _ what: String) throws(WebAuthnError) {
        guard bytes.count <= maximum else { throw WebAuthnError(.tooLarge, "\(what) over \(maximum) bytes") }
        guard !bytes.isEmpty else { throw WebAuthnError(.malformed, "\(what) is empty") }
    }
}

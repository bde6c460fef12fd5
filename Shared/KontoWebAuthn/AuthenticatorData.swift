/// The authenticator data of a WebAuthn response (WebAuthn §6.1): the RP ID hash, flags, signature counter, and on
/// registration the attested credential (AAGUID, credential ID, COSE public key). Every length is checked against
/// the bytes that remain; nothing may follow the last part.
public struct AuthenticatorData: Sendable {
    public struct Flags: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let userPresent = Flags(rawValue: 0x01)
        public static let userVerified = Flags(rawValue: 0x04)
        public static let backupEligible = Flags(rawValue: 0x08)
        public static let backedUp = Flags(rawValue: 0x10)
        public static let attestedCredentialData = Flags(rawValue: 0x40)
        public static let extensionData = Flags(rawValue: 0x80)
    }

    public struct AttestedCredential: Sendable {
        public var aaguid: [UInt8]
        public var credentialId: [UInt8]
        /// The COSE key exactly as the authenticator encoded it (what is stored).
        public var publicKeyBytes: [UInt8]
        public var publicKey: COSEKey
    }

    /// WebAuthn's limit on credential IDs.
    public static let maximumCredentialIdLength = 1_023

    public let bytes: [UInt8]
    public let rpIdHash: [UInt8]
    public let flags: Flags
    public let signCount: UInt32
    public let attestedCredential: AttestedCredential?

    public init(_ bytes: [UInt8]) throws(WebAuthnError) {
        guard bytes.count >= 37 else { throw WebAuthnError(.malformed, "authenticator data shorter than 37 bytes") }
        self.bytes = bytes
        rpIdHash = Array(bytes[0..<32])
        flags = Flags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var offset = 37
        if flags.contains(.attestedCredentialData) {
            guard bytes.count >= offset + 18 else { throw WebAuthnError(.malformed, "attested credential data truncated") }
            let aaguid = Array(bytes[offset..<offset + 16])
            let length = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard length > 0, length <= Self.maximumCredentialIdLength else {
                throw WebAuthnError(.malformed, "a credential ID of \(length) bytes (1 to \(Self.maximumCredentialIdLength))")
            }
            guard bytes.count >= offset + length else { throw WebAuthnError(.malformed, "credential ID truncated") }
            let credentialId = Array(bytes[offset..<offset + length])
            offset += length
            let (key, keyLength) = try Self.item(bytes, at: offset, "credential public key")
            let publicKeyBytes = Array(bytes[offset..<offset + keyLength])
            offset += keyLength
            attestedCredential = AttestedCredential(
                aaguid: aaguid,
                credentialId: credentialId,
                publicKeyBytes: publicKeyBytes,
                publicKey: try COSEKey(key)
            )
        } else {
            attestedCredential = nil
        }
        if flags.contains(.extensionData) {
            let (extensions, length) = try Self.item(bytes, at: offset, "extensions")
            guard case .map = extensions else { throw WebAuthnError(.malformed, "extensions are not a CBOR map") }
            offset += length
        }
        guard offset == bytes.count else {
            throw WebAuthnError(.malformed, "\(bytes.count - offset) bytes after the authenticator data")
        }
        guard !flags.contains(.backedUp) || flags.contains(.backupEligible) else {
            throw WebAuthnError(.malformed, "backed up (BS) without being backup eligible (BE)")
        }
    }

    private static func item(_ bytes: [UInt8], at offset: Int, _ what: String) throws(WebAuthnError) -> (CBORValue, Int) {
        do {
            return try CBORDecoder.decodePrefix(Array(bytes[offset...]))
        } catch {
            throw WebAuthnError(.malformed, "\(what): \(error)")
        }
    }
}

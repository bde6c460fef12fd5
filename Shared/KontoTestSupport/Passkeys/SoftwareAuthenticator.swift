import Crypto
import Foundation
import Synchronization

/// A passkey in software, for tests: makes registrations (`navigator.credentials.create`) and assertions
/// (`navigator.credentials.get`) as a platform authenticator would, with ES256 or Ed25519 keys, and can be told to
/// misbehave (no user presence, another origin, RP ID or type, a counter that goes back, a forged signature).
public final class SoftwareAuthenticator: Sendable {
    public enum Algorithm: Sendable {
        case es256, edDSA
    }

    public enum Attestation: Sendable {
        case none
        /// `packed` signed by the credential's own key.
        case packedSelf
    }

    /// How one ceremony departs from a correct one.
    public struct Tampering: Sendable {
        public var type: String?
        public var origin: String?
        public var rpId: String?
        public var crossOrigin: Bool?
        public var userPresent = true
        public var userVerified = true
        /// The counter to report instead of the next one.
        public var signCount: UInt32?
        public var forgeSignature = false

        public init() {}
    }

    public let rpId: String
    public let origin: String
    public let credentialId: [UInt8]
    public let algorithm: Algorithm
    /// The user handle the relying party gave at registration (returned by assertions, as discoverable ones do).
    private let userHandle: Mutex<[UInt8]?> = Mutex(nil)
    private let p256: P256.Signing.PrivateKey
    private let ed25519: Curve25519.Signing.PrivateKey
    private let counter: Mutex<UInt32>

    /// Reports this counter on every ceremony instead of counting (an authenticator that keeps none, as synced
    /// passkeys do): a replayed example's authenticator, made afresh from its name, then never goes back.
    private let fixedSignCount: UInt32?

    public init(rpId: String, origin: String, algorithm: Algorithm = .es256, signCount: UInt32 = 0) {
        self.rpId = rpId
        self.origin = origin
        self.algorithm = algorithm
        credentialId = (0..<32).map { _ in UInt8.random(in: 0 ... 255) }
        p256 = P256.Signing.PrivateKey()
        ed25519 = Curve25519.Signing.PrivateKey()
        counter = Mutex(signCount)
        fixedSignCount = nil
    }

    /// The same passkey every time for one `seed` (its keys and credential ID derived from it), keeping no counter:
    /// for recorded examples, which make it again at each use.
    public init(rpId: String, origin: String, seed: String) {
        self.rpId = rpId
        self.origin = origin
        algorithm = .es256
        let digest = Array(SHA256.hash(data: Array("konto-test-passkey:\(seed)".utf8)))
        credentialId = Array(SHA256.hash(data: digest))
        // A SHA-256 digest is a valid P-256 scalar but for a negligible fraction of seeds (none of the examples').
        p256 = try! P256.Signing.PrivateKey(rawRepresentation: digest)
        ed25519 = try! Curve25519.Signing.PrivateKey(rawRepresentation: digest)
        counter = Mutex(0)
        fixedSignCount = 0
    }

    /// The credential's public key in COSE form.
    public var publicKey: TestCBOR {
        switch algorithm {
        case .es256:
            let point = Array(p256.publicKey.x963Representation)
            return .map([
                (.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)),
                (.int(-2), .bytes(Array(point[1...32]))), (.int(-3), .bytes(Array(point[33...64]))),
            ])
        case .edDSA:
            return .map([(.int(1), .int(1)), (.int(3), .int(-8)), (.int(-1), .int(6)), (.int(-2), .bytes(Array(ed25519.publicKey.rawRepresentation)))])
        }
    }

    /// Keeps the user handle of the registration options (`user.id`, base64url) for later assertions.
    public func remember(userHandle: String) {
        self.userHandle.withLock { $0 = Self.bytes(base64URL: userHandle) }
    }

    public var coseAlgorithm: Int { algorithm == .es256 ? -7 : -8 }

    /// A registration answering `challenge`: clientDataJSON and the attestation object.
    public func register(
        challenge: [UInt8],
        attestation: Attestation = .none,
        publicKey: TestCBOR? = nil,
        tampering: Tampering = Tampering()
    ) -> (clientDataJSON: [UInt8], attestationObject: [UInt8]) {
        let clientData = clientDataJSON(type: tampering.type ?? "webauthn.create", challenge: challenge, tampering: tampering)
        let key = (publicKey ?? self.publicKey).encoded
        let attested = [UInt8](repeating: 0, count: 16) + [UInt8(credentialId.count >> 8), UInt8(credentialId.count & 0xFF)] + credentialId + key
        let authenticatorData = authenticatorData(flags: 0x40, tampering: tampering) + attested
        let statement: TestCBOR
        switch attestation {
        case .none:
            statement = .map([])
        case .packedSelf:
            let signature = sign(authenticatorData + Array(SHA256.hash(data: clientData)), forge: tampering.forgeSignature)
            statement = .map([(.text("alg"), .int(coseAlgorithm)), (.text("sig"), .bytes(signature))])
        }
        let object = TestCBOR.map([
            (.text("fmt"), .text(attestation == .none ? "none" : "packed")),
            (.text("attStmt"), statement),
            (.text("authData"), .bytes(authenticatorData)),
        ])
        return (clientData, object.encoded)
    }

    /// An assertion answering `challenge`: clientDataJSON, authenticator data and signature; the counter moves on.
    public func assert(
        challenge: [UInt8],
        tampering: Tampering = Tampering()
    ) -> (clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8]) {
        let clientData = clientDataJSON(type: tampering.type ?? "webauthn.get", challenge: challenge, tampering: tampering)
        let authenticatorData = authenticatorData(flags: 0, tampering: tampering)
        let signature = sign(authenticatorData + Array(SHA256.hash(data: clientData)), forge: tampering.forgeSignature)
        return (clientData, authenticatorData, signature)
    }

    /// A registration in the JSON form browsers give (`RegistrationResponseJSON`), answering base64url `challenge`.
    public func registrationJSON(
        challenge: String,
        attestation: Attestation = .none,
        tampering: Tampering = Tampering()
    ) -> [String: Any] {
        let response = register(challenge: Self.bytes(base64URL: challenge), attestation: attestation, tampering: tampering)
        let id = Self.base64URL(credentialId)
        return [
            "id": id, "rawId": id, "type": "public-key",
            "response": [
                "clientDataJSON": Self.base64URL(response.clientDataJSON),
                "attestationObject": Self.base64URL(response.attestationObject),
                "transports": ["internal"],
            ],
        ]
    }

    /// An assertion in the JSON form browsers give (`AuthenticationResponseJSON`), answering base64url `challenge`;
    /// with the user handle given at registration unless `userHandle` says otherwise.
    public func assertionJSON(challenge: String, userHandle: String? = nil, tampering: Tampering = Tampering()) -> [String: Any] {
        let response = assert(challenge: Self.bytes(base64URL: challenge), tampering: tampering)
        let id = Self.base64URL(credentialId)
        var body: [String: Any] = [
            "clientDataJSON": Self.base64URL(response.clientDataJSON),
            "authenticatorData": Self.base64URL(response.authenticatorData),
            "signature": Self.base64URL(response.signature),
        ]
        if let handle = userHandle ?? self.userHandle.withLock({ $0 }).map(Self.base64URL) {
            body["userHandle"] = handle
        }
        return ["id": id, "rawId": id, "type": "public-key", "response": body]
    }

    public static func bytes(base64URL text: String) -> [UInt8] {
        var text = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return Array(Data(base64Encoded: text) ?? Data())
    }

    private func clientDataJSON(type: String, challenge: [UInt8], tampering: Tampering) -> [UInt8] {
        var object: [String: Any] = [
            "type": type,
            "challenge": Self.base64URL(challenge),
            "origin": tampering.origin ?? origin,
        ]
        if let crossOrigin = tampering.crossOrigin { object["crossOrigin"] = crossOrigin }
        // JSONSerialization of string and bool values cannot fail.
        return Array(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    private func authenticatorData(flags: UInt8, tampering: Tampering) -> [UInt8] {
        var flags = flags
        if tampering.userPresent { flags |= 0x01 }
        if tampering.userVerified { flags |= 0x04 }
        let count = counter.withLock { value -> UInt32 in
            value += 1
            return tampering.signCount ?? fixedSignCount ?? value
        }
        return Array(SHA256.hash(data: Array((tampering.rpId ?? rpId).utf8))) + [flags]
            + withUnsafeBytes(of: count.bigEndian, Array.init)
    }

    private func sign(_ data: [UInt8], forge: Bool) -> [UInt8] {
        let message = forge ? data + [0] : data
        switch algorithm {
        case .es256: return Array(try! p256.signature(for: message).derRepresentation)
        case .edDSA: return Array(try! ed25519.signature(for: message))
        }
    }

    public static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

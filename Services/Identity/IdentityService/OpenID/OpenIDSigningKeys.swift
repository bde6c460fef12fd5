import Foundation
import KontoContracts

/// The keys Konto signs its tokens with (`KONTO_IDENTITY_OIDC_KEYS`, PEM files, comma-separated): the first signs
/// (per algorithm: the first ES256 key signs ES256 tokens, the first RS256 key RS256 ones); every key is published.
/// Rotation: add the new key after the current one (published, so relying parties have it before it signs), later
/// move it first, and drop the old one once the tokens it signed have expired.
public struct OpenIDSigningKeys: Sendable, Equatable {
    public let keys: [OpenIDSigningKey]

    public init(_ keys: [OpenIDSigningKey]) throws(OpenIDKeyProblem) {
        guard !keys.isEmpty else { throw OpenIDKeyProblem("no signing key") }
        var seen: Set<String> = []
        for key in keys where !seen.insert(key.keyId).inserted {
            throw OpenIDKeyProblem("the same key is listed twice (kid \(key.keyId))")
        }
        self.keys = keys
    }

    /// Reads each file; a problem names its file.
    public static func load(paths: [String]) throws(OpenIDKeyProblem) -> OpenIDSigningKeys {
        var keys: [OpenIDSigningKey] = []
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path), let pem = String(data: data, encoding: .utf8) else {
                throw OpenIDKeyProblem("\(path): cannot read the file")
            }
            do {
                keys.append(try OpenIDSigningKey(pem: pem))
            } catch {
                throw OpenIDKeyProblem("\(path): \(error.description)")
            }
        }
        return try OpenIDSigningKeys(keys)
    }

    /// The key that signs with `algorithm` (`ES256`, `RS256`), if one is configured.
    public func signing(_ algorithm: String) -> OpenIDSigningKey? {
        keys.first { $0.algorithm == algorithm }
    }

    /// The same keys: a private key's public half names it.
    public static func == (left: OpenIDSigningKeys, right: OpenIDSigningKeys) -> Bool {
        left.published == right.published
    }

    /// What `/oauth2/jwks` publishes: every key's public half, never a private part.
    public var published: [IdentityJSONWebKey] { keys.map(\.publicKey) }
}

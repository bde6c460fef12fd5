import Crypto
import Foundation
import KontoModel
import KontoWire

/// Seals a password-reset token for the channel that delivers it and opens it there.
///
/// The key is derived from the deployment's secret for this purpose alone, so a database dump, a dead letter or a
/// feed reader without the secret holds nothing usable. The account's id is authenticated with the token: a sealed
/// token moved into another account's event does not open.
public struct ResetTokenSeal: Sendable {
    private let key: SymmetricKey

    public init(secret: WireSecret) {
        key = secret.derivedKey(purpose: "konto.reset-token-delivery.v1")
    }

    public func seal(_ token: String, accountId: String) -> SealedResetToken {
        do {
            let box = try AES.GCM.seal(Array(token.utf8), using: key, authenticating: Array(accountId.utf8))
            // `combined` is nil only for a nonce of another size than 12 bytes; seal(_:using:) makes 12-byte ones.
            guard let combined = box.combined else { preconditionFailure("AES-GCM box without its combined form") }
            return SealedResetToken(box: Self.base64URL(combined))
        } catch {
            // AES.GCM.seal fails only for a key that is not 128, 192 or 256 bits; the derived key is 256.
            preconditionFailure("AES-GCM sealing failed: \(error)")
        }
    }

    /// The token, or ``ResetTokenSealError`` when the box was not sealed with this deployment's secret for this
    /// account (or was altered).
    public func open(_ sealed: SealedResetToken, accountId: String) throws(ResetTokenSealError) -> String {
        guard sealed.box.utf8.count <= 1_024, let data = Self.data(base64URL: sealed.box) else { throw ResetTokenSealError() }
        do {
            let box = try AES.GCM.SealedBox(combined: data)
            let plain = try AES.GCM.open(box, using: key, authenticating: Array(accountId.utf8))
            guard let token = String(bytes: plain, encoding: .utf8) else { throw ResetTokenSealError() }
            return token
        } catch {
            throw ResetTokenSealError()
        }
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func data(base64URL text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}

/// A sealed reset token that does not open with this deployment's secret and account.
public struct ResetTokenSealError: Error, Equatable, CustomStringConvertible {
    public static let code = "notifications.resetTokenUnsealable"

    public init() {}

    public var description: String { "\(Self.code): the sealed reset token does not open with this deployment's secret" }
}

import KontoContracts
import KontoModel

/// Why an ID token was refused: each a clear reason in `account.invalidIdentityToken`'s message (none names a
/// secret or echoes the token).
public enum IdentityTokenRefusal: String, Error, Sendable, CaseIterable {
    case oversized = "the token is larger than 8 KiB"
    case malformed = "not a signed JWT (three base64url parts with a JSON header and claims)"
    case unsupportedAlgorithm = "signed with an algorithm Konto does not accept (none and HMAC never; only what the provider publishes)"
    case unknownKey = "signed with a key the provider does not publish"
    case badSignature = "the signature does not verify"
    case wrongIssuer = "issued by another issuer"
    case wrongAudience = "minted for another client"
    case expired = "expired"
    case implausibleLifetime = "valid for longer than Konto accepts (exp more than 7 days ahead)"
    case duplicateClaim = "a claim appears twice"
    case issuedInFuture = "issued in the future"
    case missingSubject = "without a subject"
    case missingNonce = "a nonce is required"
    case wrongNonce = "the nonce does not match"
    case replayedNonce = "this nonce was used already"

    var error: ServiceError {
        ServiceError(AccountError(code: .invalidIdentityToken, message: "The identity token was refused: \(rawValue)."))
    }
}

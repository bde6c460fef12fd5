import Foundation

/// Placeholders in recorded examples for what a service generates (ids, tokens, timestamps), so that an example
/// can record "some token" and a later example can use the token the service actually answered with.
///
/// - `"$match:KIND"` in an expected response or error details: any value of that kind.
/// - `"$capture:NAME:KIND"`: the same, and the actual value is remembered as NAME.
/// - `"$ref:NAME"` anywhere (a later request, an expected value): the value remembered as NAME.
/// - `"$given:NAME:KIND"` in a request: a value the example's `given` condition supplies (e.g. a reset token as it was
///   mailed), of that kind; consumers get a sample of the kind.
///
/// - `"$totp:NAME:OFFSET"` in a request: the TOTP code (RFC 6238, 6 digits, 30 s) of the base32 secret captured as
///   NAME, for the step OFFSET (-1, 0 or 1) away from the replay's present; consumers get `123456`. Each use of a
///   secret takes a later step than the one before (a code is accepted once), so a sequence uses -1, then 0, then 1.
///
/// - `"$passkeyCreate:NAME:CHALLENGE"` in a request: a passkey registration (`RegistrationResponseJSON`, attestation
///   `none`) by the software passkey NAME (the same keys for the same name) answering the base64url challenge
///   captured as CHALLENGE, for RP ID `localhost` on `http://localhost:8080` (Identity's defaults).
/// - `"$passkeyGet:NAME:CHALLENGE"` or `"$passkeyGet:NAME:CHALLENGE:ACCOUNT"`: that passkey's assertion
///   (`AuthenticationResponseJSON`) answering CHALLENGE; with ACCOUNT, a discoverable passkey's, carrying the user
///   handle of the account ID captured as ACCOUNT (a passwordless sign-in needs it). Consumers get each made for a
///   sample challenge.
///
/// - `"$query:NAME:PARAMETER"` in a request: the query parameter PARAMETER of the URL captured as NAME (an
///   authorization code in the redirect an OpenID Provider answered with); consumers get a sample string.
///
/// Kinds: `string` (non-empty), `uuid`, `token` (at least 32 URL-safe base64 characters), `timestamp` (ISO 8601
/// date and time with a zone), `integer`, `number`, `bool`, `url` (an absolute URL with a host), `any`.
enum ContractPlaceholder: Equatable {
    case match(Kind)
    case capture(name: String, kind: Kind)
    case reference(name: String)
    case given(name: String, kind: Kind)
    case totp(name: String, offset: Int64)
    case passkeyCreate(passkey: String, challenge: String)
    case passkeyGet(passkey: String, challenge: String, account: String?)
    case queryParameter(url: String, parameter: String)

    /// The software passkey of a `$passkeyCreate` / `$passkeyGet` name.
    static func passkey(_ name: String) -> SoftwareAuthenticator {
        SoftwareAuthenticator(rpId: "localhost", origin: "http://localhost:8080", seed: name)
    }

    /// The JSON a passkey placeholder stands for, answering `challenge` (base64url).
    /// `userHandle`: base64url, for a discoverable passkey's assertion.
    func passkeyJSON(challenge: String, userHandle: String? = nil) -> [String: Any]? {
        switch self {
        case .passkeyCreate(let name, _): Self.passkey(name).registrationJSON(challenge: challenge)
        case .passkeyGet(let name, _, _): Self.passkey(name).assertionJSON(challenge: challenge, userHandle: userHandle)
        default: nil
        }
    }

    enum Kind: String, CaseIterable {
        case string, uuid, token, timestamp, integer, number, bool, url, any
    }

    /// The placeholder a JSON value spells, nil for an ordinary value; throws for a malformed placeholder.
    static func parse(_ value: Any) throws -> ContractPlaceholder? {
        guard let text = value as? String, text.hasPrefix("$") else { return nil }
        let parts = text.dropFirst().split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        func kind(_ name: String) throws -> Kind {
            guard let kind = Kind(rawValue: name) else {
                throw ContractExampleError("unknown placeholder kind \"\(name)\" in \(text) (expected one of \(Kind.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            return kind
        }
        switch parts.first {
        case "match" where parts.count == 2:
            return .match(try kind(parts[1]))
        case "capture" where parts.count == 3 && !parts[1].isEmpty:
            return .capture(name: parts[1], kind: try kind(parts[2]))
        case "ref" where parts.count == 2 && !parts[1].isEmpty:
            return .reference(name: parts[1])
        case "given" where parts.count == 3 && !parts[1].isEmpty:
            return .given(name: parts[1], kind: try kind(parts[2]))
        case "totp" where parts.count == 3 && !parts[1].isEmpty:
            guard let offset = Int64(parts[2]), (-1...1).contains(offset) else {
                throw ContractExampleError("malformed placeholder \(text): the offset is -1, 0 or 1")
            }
            return .totp(name: parts[1], offset: offset)
        case "passkeyCreate" where parts.count == 3 && !parts[1].isEmpty && !parts[2].isEmpty:
            return .passkeyCreate(passkey: parts[1], challenge: parts[2])
        case "passkeyGet" where (parts.count == 3 || parts.count == 4) && !parts[1].isEmpty && !parts[2].isEmpty && parts.last?.isEmpty == false:
            return .passkeyGet(passkey: parts[1], challenge: parts[2], account: parts.count == 4 ? parts[3] : nil)
        case "query" where parts.count == 3 && !parts[1].isEmpty && !parts[2].isEmpty:
            return .queryParameter(url: parts[1], parameter: parts[2])
        case "match", "capture", "ref", "given", "totp", "passkeyCreate", "passkeyGet", "query":
            throw ContractExampleError("malformed placeholder \(text)")
        default:
            // Some other string that starts with "$": an ordinary value.
            return nil
        }
    }
}

extension ContractPlaceholder.Kind {
    /// Whether a decoded JSON value is of this kind.
    func accepts(_ value: Any) -> Bool {
        switch self {
        case .any:
            return true
        case .string:
            return (value as? String).map { !$0.isEmpty } ?? false
        case .uuid:
            return (value as? String).flatMap(UUID.init(uuidString:)) != nil
        case .token:
            guard let text = value as? String, text.count >= 32 else { return false }
            return text.unicodeScalars.allSatisfy { $0.properties.isASCIIHexDigit || ("A"..."Z").contains($0) || ("a"..."z").contains($0) || $0 == "-" || $0 == "_" }
        case .timestamp:
            guard let text = value as? String else { return false }
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            if formatter.date(from: text) != nil { return true }
            formatter.formatOptions = [.withInternetDateTime]
            return formatter.date(from: text) != nil
        case .integer:
            guard let number = value as? NSNumber, !Self.isBool(number) else { return false }
            return number.doubleValue.rounded() == number.doubleValue
        case .number:
            guard let number = value as? NSNumber else { return false }
            return !Self.isBool(number)
        case .bool:
            guard let number = value as? NSNumber else { return false }
            return Self.isBool(number)
        case .url:
            guard let text = value as? String, let components = URLComponents(string: text) else { return false }
            return components.scheme != nil && components.host?.isEmpty == false
        }
    }

    /// A value of this kind, for consumers that decode the examples with their own types.
    var sample: Any {
        switch self {
        case .any, .string: "sample"
        case .uuid: "00000000-0000-4000-8000-000000000000"
        case .token: "c2FtcGxlLXRva2VuLXNhbXBsZS10b2tlbi1zYW1wbGUtdG9r"
        // As Konto writes timestamps (``Timestamp``): UTC with milliseconds.
        case .timestamp: "2026-01-01T00:00:00.000Z"
        case .integer, .number: 1
        case .bool: true
        case .url: "https://client.example.org/cb?code=c2FtcGxlLWNvZGU&state=sample"
        }
    }

    /// JSONSerialization gives booleans as NSNumber too; how it writes one back tells them apart on every platform.
    private static func isBool(_ number: NSNumber) -> Bool {
        let text = try? ContractExample.canonical(number)
        return text == "true" || text == "false"
    }
}

import Foundation
import KontoContracts
import KontoModel
import KontoRuntime
import Yams

/// An external receiver of events (e.g. a mail sender for `passwordResetRequested`), registered in configuration.
///
/// In YAML: `{name, url, secret?, secrets?, types?, insecure?}`. Every request is signed with `secret` and with each
/// of `secrets` (``WebhookSignature``, one signature per secret): one secret normally, two while one is rotated, so
/// receivers holding either the new or the old secret verify.
public struct WebhookEndpoint: Sendable, Equatable, Decodable {
    /// Names its consumer group (`webhook:<name>`) and its delivery log: letters, digits, `-` and `_`, 1 to 64.
    public var name: String
    public var url: URL
    /// A secret as Standard Webhooks writes it, `whsec_<base64 of 24 bytes or more>`; never logged.
    public var secret: String?
    /// More secrets, for a rotation (e.g. `[new]` beside `secret: old`, or `[new, old]` instead of `secret`).
    public var secrets: [String]?
    /// Event types it receives; nil for every type.
    public var types: [String]?
    /// Allows an `http://` URL: events (reset tokens among them) would cross the network in clear text, so only
    /// for a receiver on the same machine in development and tests.
    public var insecure: Bool
    /// Where it was made; never read from the file. Only the file's endpoints get a reset token opened.
    public var source: NotificationsWebhookEndpoint.Source

    public init(
        name: String, url: URL, secret: String? = nil, secrets: [String]? = nil, types: [String]? = nil, insecure: Bool = false,
        source: NotificationsWebhookEndpoint.Source = .file
    ) {
        self.name = name
        self.url = url
        self.secret = secret
        self.secrets = secrets
        self.types = types
        self.insecure = insecure
        self.source = source
    }

    private enum CodingKeys: String, CodingKey {
        case name, url, secret, secrets, types, insecure
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try container.decode(String.self, forKey: .name),
            url: try container.decode(URL.self, forKey: .url),
            secret: try container.decodeIfPresent(String.self, forKey: .secret),
            secrets: try container.decodeIfPresent([String].self, forKey: .secrets),
            types: try container.decodeIfPresent([String].self, forKey: .types),
            insecure: try container.decodeIfPresent(Bool.self, forKey: .insecure) ?? false
        )
    }

    /// The consumer group its deliveries go through.
    public var group: String { "webhook:\(name)" }

    /// Whether a `passwordResetRequested` reaches it with the token opened: a file's endpoint that names the type.
    /// Least privilege: an endpoint added through the API (a key with `deliveries:write`) never becomes every
    /// account's reset link; it gets the event without the token, as an endpoint taking every type does.
    public var deliversResetTokens: Bool {
        source == .file && types?.contains("passwordResetRequested") == true
    }

    /// Every secret it signs with, as written: `secret` first, then `secrets`.
    public var secretTexts: [String] { (secret.map { [$0] } ?? []) + (secrets ?? []) }

    /// The secrets it signs with; those that cannot be read are left out (``problems(_:)`` refuses them first).
    public var signingSecrets: [WebhookSecret] { secretTexts.compactMap { try? WebhookSecret($0) } }

    /// Every problem with these endpoints, one line each, naming the endpoint; empty when they are usable.
    public static func problems(_ endpoints: [WebhookEndpoint]) -> [String] {
        var problems: [String] = []
        var names: Set<String> = []
        for (index, endpoint) in endpoints.enumerated() {
            let nameIsValid = isValidName(endpoint.name)
            // The name when it can be shown (an invalid one may be anything: only its position then).
            let label = nameIsValid ? "webhook '\(endpoint.name)' (\(index + 1))" : "webhook \(index + 1)"
            if !nameIsValid {
                problems.append("\(label): \(nameRule)")
            } else if !names.insert(endpoint.name).inserted {
                problems.append("\(label): name '\(endpoint.name)' is used twice")
            }
            let scheme = endpoint.url.scheme?.lowercased() ?? ""
            if !["http", "https"].contains(scheme) || endpoint.url.host == nil {
                problems.append("\(label): url must be an https URL (or http with insecure: true)")
            } else if scheme == "http" && !endpoint.insecure {
                problems.append("\(label): url is http://, which sends events in clear text; use https, or set insecure: true for a receiver in local development")
            }
            let texts = endpoint.secretTexts
            if texts.isEmpty {
                problems.append("\(label): secret (or secrets) is missing: whsec_ followed by the base64 of at least \(WebhookSecret.minimumKeyBytes) random bytes")
            }
            for (position, text) in texts.enumerated() {
                do {
                    _ = try WebhookSecret(text)
                } catch {
                    // Which secret by position, never its text.
                    let which = texts.count == 1 ? "secret" : "secret \(position + 1) of \(texts.count)"
                    problems.append("\(label): \(which) \(error.message) (\(error.code)); write whsec_ followed by the base64 of at least \(WebhookSecret.minimumKeyBytes) random bytes")
                }
            }
            if Set(texts).count < texts.count {
                problems.append("\(label): a secret is listed twice")
            }
            problems += typeProblems(endpoint.types).map { "\(label): \($0)" }
        }
        return problems
    }

    static let nameRule = "name must be 1 to 64 letters, digits, - or _"

    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x5F
        }
    }

    static func typeProblems(_ types: [String]?) -> [String] {
        var problems = (types ?? []).filter { !NotificationsContract.eventTypes.contains($0) }.map { "unknown event type '\($0.prefix(64))'" }
        if types?.isEmpty == true {
            problems.append("types lists at least one event type, or is left out for every type")
        }
        return problems
    }

    /// The URL as an operator may see it listed: without credentials, query or fragment (any may hold a token).
    public var listedURL: String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "" }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return components.string ?? ""
    }

    /// Reads endpoints from a YAML (or JSON) file: a list of `{name, url, secret?, secrets?, types?, insecure?}`.
    public static func load(path: String) throws(ServiceEnvironmentError) -> [WebhookEndpoint] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ServiceEnvironmentError(variable: variable, problem: "names a file that cannot be read: \(path)")
        }
        let endpoints: [WebhookEndpoint]
        do {
            endpoints = try YAMLDecoder().decode([WebhookEndpoint].self, from: text)
        } catch {
            throw ServiceEnvironmentError(variable: variable, problem: "is not a list of {name, url, secret, secrets?, types?, insecure?} in \(path)")
        }
        try check(endpoints, in: " in \(path)")
        return endpoints
    }

    /// Refuses endpoints with problems, all of them in one error (a server refuses them at start, however configured).
    public static func check(_ endpoints: [WebhookEndpoint], in place: String = "") throws(ServiceEnvironmentError) {
        let problems = problems(endpoints)
        guard problems.isEmpty else {
            throw ServiceEnvironmentError(variable: variable, problem: "has problems\(place): " + problems.joined(separator: "; "))
        }
    }

    static let variable = "KONTO_NOTIFICATIONS_WEBHOOKS"
}

extension WebhookEndpoint: CustomStringConvertible, CustomReflectable {
    /// Never shows a secret.
    public var description: String { "WebhookEndpoint(\(name), \(url), \(secretTexts.count) secret(s))" }

    /// Dumps and reflection leave the secrets out too.
    public var customMirror: Mirror {
        Mirror(self, children: ["name": name, "url": url, "types": types as Any, "insecure": insecure, "source": source], displayStyle: .struct)
    }
}

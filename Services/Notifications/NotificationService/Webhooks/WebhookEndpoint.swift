import Foundation
import KontoContracts
import KontoModel
import KontoRuntime
import Yams

/// An external receiver of events (e.g. a mail sender for `passwordResetRequested`), registered in configuration.
public struct WebhookEndpoint: Sendable, Equatable, Decodable {
    /// Names its consumer group (`webhook:<name>`) and its delivery log: letters, digits, `-` and `_`, 1 to 64.
    public var name: String
    public var url: URL
    /// Signs every request (``WebhookSignature``); 16 bytes or more, never logged.
    public var secret: String
    /// Event types it receives; nil for every type.
    public var types: [String]?

    public init(name: String, url: URL, secret: String, types: [String]? = nil) {
        self.name = name
        self.url = url
        self.secret = secret
        self.types = types
    }

    /// The consumer group its deliveries go through.
    public var group: String { "webhook:\(name)" }

    /// Every problem with these endpoints, one line each; empty when they are usable.
    public static func problems(_ endpoints: [WebhookEndpoint]) -> [String] {
        var problems: [String] = []
        var names: Set<String> = []
        for (index, endpoint) in endpoints.enumerated() {
            let label = "webhook \(index + 1)"
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
            if endpoint.name.isEmpty || endpoint.name.count > 64 || !endpoint.name.allSatisfy(allowed.contains) {
                problems.append("\(label): name must be 1 to 64 letters, digits, - or _")
            } else if !names.insert(endpoint.name).inserted {
                problems.append("\(label): name '\(endpoint.name)' is used twice")
            }
            if !["http", "https"].contains(endpoint.url.scheme?.lowercased() ?? "") || endpoint.url.host == nil {
                problems.append("\(label): url must be an http or https URL")
            }
            if endpoint.secret.utf8.count < 16 {
                problems.append("\(label): secret must be at least 16 bytes long")
            }
            for type in endpoint.types ?? [] where !NotificationsContract.eventTypes.contains(type) {
                problems.append("\(label): unknown event type '\(type.prefix(64))'")
            }
            if endpoint.types?.isEmpty == true {
                problems.append("\(label): types lists at least one event type, or is left out for every type")
            }
        }
        return problems
    }

    /// Reads endpoints from a YAML (or JSON) file: a list of `{name, url, secret, types?}`.
    public static func load(path: String) throws(ServiceEnvironmentError) -> [WebhookEndpoint] {
        let variable = "KONTO_NOTIFICATIONS_WEBHOOKS"
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
            throw ServiceEnvironmentError(variable: variable, problem: "is not a list of {name, url, secret, types?} in \(path)")
        }
        let problems = problems(endpoints)
        guard problems.isEmpty else {
            throw ServiceEnvironmentError(variable: variable, problem: "has problems in \(path): " + problems.joined(separator: "; "))
        }
        return endpoints
    }
}

extension WebhookEndpoint: CustomStringConvertible {
    /// Never shows the secret.
    public var description: String { "WebhookEndpoint(\(name), \(url))" }
}

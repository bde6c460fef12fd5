import Foundation
import KontoMail
import KontoRuntime
import NIOCore
import NIOSSL

/// How the courier sends mail: the SMTP server, the sender, the base of links, the templates and how many mails
/// are in flight at once. Read from the environment; mail is off when `KONTO_MAIL_SMTP_URL` is not set.
public struct MailSettings: Sendable {
    public var smtp: SMTPClient.Configuration
    public var from: MailAddress
    /// Shown beside the sender's address (`KONTO_MAIL_FROM="Konto <accounts@example.org>"`).
    public var fromName: String?
    /// The base of every link in a mail (the console's reset and verification pages), without a trailing slash.
    public var publicURL: String
    /// Where the console's pages are under ``publicURL`` (`KONTO_GATEWAY_CONSOLE_PATH`, read as the gateway reads it;
    /// `/account` when the console is off, for a deployment that serves those pages itself).
    public var consolePath: String
    public var templates: MailTemplates
    /// Mails in flight at once: the bound on SMTP connections.
    public var concurrency: Int
    /// Where mails go instead of ``smtp`` (the dev stack's terminal); nil: an ``SMTPClient`` for ``smtp``.
    public var transport: (any MailTransport)?

    public init(
        smtp: SMTPClient.Configuration, from: MailAddress, fromName: String? = nil, publicURL: String,
        consolePath: String = ServiceEnvironment.defaultConsolePath, templates: MailTemplates = .builtIn, concurrency: Int = 4
    ) {
        self.smtp = smtp
        self.from = from
        self.fromName = fromName
        self.publicURL = publicURL
        self.consolePath = consolePath
        self.templates = templates
        self.concurrency = concurrency
    }

    /// The settings from `KONTO_MAIL_SMTP_URL`, `KONTO_MAIL_FROM`, `KONTO_PUBLIC_URL`, `KONTO_GATEWAY_CONSOLE_PATH`, `KONTO_MAIL_TEMPLATES`,
    /// `KONTO_MAIL_SMTP_CA`, `KONTO_MAIL_TIMEOUT_SECONDS` and `KONTO_MAIL_CONCURRENCY`; nil when no SMTP URL is set (mail off). Every problem
    /// names its variable, and never repeats a password.
    public init?(environment: ServiceEnvironment) throws(ServiceEnvironmentError) {
        guard let url = environment.string("KONTO_MAIL_SMTP_URL") else { return nil }
        var smtp = try Self.smtp(url: url)
        if let ca = environment.string("KONTO_MAIL_SMTP_CA") {
            guard FileManager.default.isReadableFile(atPath: ca) else {
                throw ServiceEnvironmentError(variable: "KONTO_MAIL_SMTP_CA", problem: "names no readable file")
            }
            smtp.trustRoots = .file(ca)
        }
        smtp.timeout = .seconds(Int64(try environment.integer("KONTO_MAIL_TIMEOUT_SECONDS", default: 30, in: 1...300)))
        let (from, fromName) = try Self.sender(try environment.required("KONTO_MAIL_FROM", purpose: "the sender of Konto's mail, with KONTO_MAIL_SMTP_URL"))
        let publicURL = try Self.publicURL(try environment.required("KONTO_PUBLIC_URL", purpose: "the base of the links in Konto's mail, with KONTO_MAIL_SMTP_URL"))
        let templates: MailTemplates
        if let directory = environment.string("KONTO_MAIL_TEMPLATES") {
            do {
                templates = try MailTemplates(directory: directory)
            } catch {
                throw ServiceEnvironmentError(variable: "KONTO_MAIL_TEMPLATES", problem: error.description)
            }
        } else {
            templates = .builtIn
        }
        self.init(
            smtp: smtp, from: from, fromName: fromName, publicURL: publicURL,
            consolePath: try environment.consolePath() ?? ServiceEnvironment.defaultConsolePath, templates: templates,
            concurrency: try environment.integer("KONTO_MAIL_CONCURRENCY", default: 4, in: 1...64)
        )
    }

    /// `smtp://[user:password@]host[:port][?tls=none]` (STARTTLS required, port 587) or `smtps://…` (TLS from the
    /// start, port 465); user and password percent-encoded.
    static func smtp(url text: String) throws(ServiceEnvironmentError) -> SMTPClient.Configuration {
        func problem(_ text: String) -> ServiceEnvironmentError {
            ServiceEnvironmentError(variable: "KONTO_MAIL_SMTP_URL", problem: text)
        }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              let host = components.host, !host.isEmpty
        else {
            throw problem("is not a URL such as smtp://user:password@mail.example.org:587")
        }
        guard components.path.isEmpty || components.path == "/", components.fragment == nil else {
            throw problem("has a path or fragment; an SMTP URL is smtp[s]://user:password@host:port")
        }
        var security: SMTPClientStateMachine.Security
        switch scheme {
        case "smtp": security = .startTLS
        case "smtps": security = .implicitTLS
        default: throw problem("must start with smtp:// (STARTTLS) or smtps:// (TLS)")
        }
        for item in components.queryItems ?? [] {
            guard item.name == "tls", item.value == "none", scheme == "smtp" else {
                throw problem("knows one option, ?tls=none on an smtp:// URL (a local mail catcher without TLS)")
            }
            security = .none
        }
        let port = components.port ?? (scheme == "smtps" ? 465 : 587)
        guard (1...65_535).contains(port) else { throw problem("has a port outside 1 to 65535") }
        var configuration = SMTPClient.Configuration(host: host, port: port, security: security)
        if let user = components.percentEncodedUser {
            guard let password = components.percentEncodedPassword, let username = user.removingPercentEncoding,
                  let decoded = password.removingPercentEncoding, !username.isEmpty
            else {
                throw problem("has a user without a password (write smtp://user:password@host, both percent-encoded)")
            }
            configuration.username = username
            configuration.password = decoded
        }
        return configuration
    }

    /// `accounts@example.org` or `Name <accounts@example.org>`.
    static func sender(_ text: String) throws(ServiceEnvironmentError) -> (MailAddress, String?) {
        var address = text.trimmingCharacters(in: .whitespaces)
        var name: String?
        if address.hasSuffix(">"), let open = address.lastIndex(of: "<") {
            let shown = address[..<open].trimmingCharacters(in: .whitespaces)
            name = shown.isEmpty ? nil : shown
            address = String(address[address.index(after: open)..<address.index(before: address.endIndex)])
        }
        do {
            return (try MailAddress(address), name)
        } catch {
            throw ServiceEnvironmentError(variable: "KONTO_MAIL_FROM", problem: "is not an address (accounts@example.org, or Name <accounts@example.org>)")
        }
    }

    /// An http(s) URL without query or fragment; its trailing slash removed.
    static func publicURL(_ text: String) throws(ServiceEnvironmentError) -> String {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              ["http", "https"].contains(scheme), components.host?.isEmpty == false,
              components.query == nil, components.fragment == nil, components.user == nil
        else {
            throw ServiceEnvironmentError(variable: "KONTO_PUBLIC_URL", problem: "must be an http(s) URL such as https://accounts.example.org, without query or fragment")
        }
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }
}

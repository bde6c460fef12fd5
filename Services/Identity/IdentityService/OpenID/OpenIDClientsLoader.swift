import Crypto
import Foundation
import KontoContracts
import Yams

/// Reads the clients file (`KONTO_IDENTITY_OIDC_CLIENTS`, YAML or JSON by extension): the applications that sign in
/// with Konto as their OpenID Provider.
///
/// ```yaml
/// clients:
///   - id: study-app                      # a native app: public, PKCE alone binds its codes
///     name: Spezi Study
///     type: public
///     redirectUris: [org.example.study:/oauth2/callback]
///     scopes: [openid, profile, email, offline_access]
///     firstParty: true                   # the deployment's own: no consent page
///   - id: dashboard                      # a web site with a server: confidential
///     name: Study dashboard
///     type: confidential
///     authentication: client_secret_basic  # or client_secret_post, private_key_jwt (with jwksFile)
///     secretFile: /run/secrets/dashboard
///     redirectUris: [https://dashboard.example.org/oauth2/callback]
///     postLogoutRedirectUris: [https://dashboard.example.org/]
///     scopes: [openid, email]
///     idTokenAlgorithm: RS256            # ES256 unless the client needs RS256
///     sectorIdentifier: example.org      # pairwise `sub` for this sector
/// ```
///
/// Every problem is collected, each naming its client, before the file is refused; unknown fields are refused too.
public struct OpenIDClientsLoader: Sendable {
    public init() {}

    public func load(path: String) throws(OpenIDClientsError) -> OpenIDClients {
        let url = URL(fileURLWithPath: path)
        let source = url.lastPathComponent
        guard let data = try? Data(contentsOf: url) else { throw OpenIDClientsError(source: source, problems: ["cannot read file at \(path)"]) }
        let json: Bool
        switch url.pathExtension.lowercased() {
        case "json": json = true
        case "yaml", "yml": json = false
        default: throw OpenIDClientsError(source: source, problems: ["unsupported file type (expected .yaml, .yml or .json)"])
        }
        return try load(data: data, json: json, source: source, directory: url.deletingLastPathComponent().path)
    }

    /// - Parameter directory: where relative secret and key file paths are looked for.
    public func load(data: Data, json: Bool, source: String, directory: String) throws(OpenIDClientsError) -> OpenIDClients {
        let entries: [[String: Any]]
        do {
            let document: Any? = if json {
                try JSONSerialization.jsonObject(with: data)
            } else {
                try Yams.load(yaml: String(decoding: data, as: UTF8.self))
            }
            guard let top = document as? [String: Any], let list = top["clients"] as? [Any] else {
                throw OpenIDClientsError(source: source, problems: ["clients: missing (a list of clients)"])
            }
            if let unknown = top.keys.first(where: { $0 != "clients" }) {
                throw OpenIDClientsError(source: source, problems: ["\(unknown): unknown field (expected clients)"])
            }
            entries = try list.enumerated().map { index, entry throws(OpenIDClientsError) in
                guard let fields = entry as? [String: Any] else { throw OpenIDClientsError(source: source, problems: ["clients[\(index)]: not a mapping"]) }
                return fields
            }
        } catch let error as OpenIDClientsError {
            throw error
        } catch {
            throw OpenIDClientsError(source: source, problems: ["not a clients file: \(json ? "JSON" : "YAML") that does not parse"])
        }
        var problems: [String] = []
        var clients: [OpenIDClient] = []
        var ids: Set<String> = []
        for (index, entry) in entries.enumerated() {
            let label = (entry["id"] as? String).map { "client \"\($0.prefix(64))\"" } ?? "clients[\(index)]"
            var own: [String] = []
            if let client = client(entry, directory: directory, problems: &own) {
                if !ids.insert(client.id).inserted { own.append("id: used by another client") }
                clients.append(client)
            }
            problems += own.map { "\(label): \($0)" }
        }
        guard problems.isEmpty else { throw OpenIDClientsError(source: source, problems: problems) }
        return OpenIDClients(clients)
    }

    static let fields: Set<String> = [
        "id", "name", "type", "authentication", "secretFile", "jwksFile", "redirectUris", "postLogoutRedirectUris", "scopes", "firstParty",
        "idTokenAlgorithm", "sectorIdentifier",
    ]

    private func client(_ entry: [String: Any], directory: String, problems: inout [String]) -> OpenIDClient? {
        problems += Set(entry.keys).subtracting(Self.fields).sorted().map { "\($0): unknown field" }
        func text(_ field: String) -> String? {
            guard let value = entry[field] else { return nil }
            guard let text = value as? String else {
                problems.append("\(field): must be text")
                return nil
            }
            return text
        }
        func list(_ field: String) -> [String] {
            guard let value = entry[field] else { return [] }
            guard let list = value as? [Any], list.allSatisfy({ $0 is String }) else {
                problems.append("\(field): must be a list of text")
                return []
            }
            return list.compactMap { $0 as? String }
        }
        let id = text("id") ?? ""
        if !Self.isClientId(id) { problems.append("id: must be 1 to 128 letters, digits or . _ - :") }
        let name = text("name") ?? id
        let type = text("type") ?? ""
        guard ["public", "confidential"].contains(type) else {
            problems.append("type: must be public or confidential")
            return nil
        }
        let isPublic = type == "public"
        var authentication = OpenIDClient.Authentication.none
        let method = text("authentication")
        if isPublic {
            if method != nil || entry["secretFile"] != nil || entry["jwksFile"] != nil {
                problems.append("authentication, secretFile, jwksFile: a public client keeps no secret (PKCE binds its codes)")
            }
        } else {
            switch method {
            case let method? where OpenIDClient.secretMethods.contains(method):
                if entry["jwksFile"] != nil { problems.append("jwksFile: only with authentication private_key_jwt") }
                if let path = text("secretFile") {
                    if let secret = read(path, directory: directory, field: "secretFile", problems: &problems) {
                        let trimmed = secret.trimmingCharacters(in: .whitespacesAndNewlines)
                        if trimmed.utf8.count < 32 {
                            problems.append("secretFile: the secret must have at least 32 characters (e.g. `openssl rand -base64 32`)")
                        } else {
                            authentication = .secret(method: method, digest: Array(SHA256.hash(data: Data(trimmed.utf8))))
                        }
                    }
                } else {
                    problems.append("secretFile: missing (the client's secret, a file only Identity reads)")
                }
            case "private_key_jwt":
                if entry["secretFile"] != nil { problems.append("secretFile: not with private_key_jwt (the client signs with its key)") }
                if let path = text("jwksFile") {
                    if let jwks = read(path, directory: directory, field: "jwksFile", problems: &problems) {
                        let keys = Self.publicKeys(jwks)
                        if keys.isEmpty {
                            problems.append("jwksFile: no EC P-256 or RSA public key in it (a JWK Set: {\"keys\": [...]})")
                        } else {
                            authentication = .privateKeyJWT(keys: keys)
                        }
                    }
                } else {
                    problems.append("jwksFile: missing (the client's public keys, a JWK Set)")
                }
            default:
                problems.append("authentication: must be client_secret_basic, client_secret_post or private_key_jwt")
            }
        }
        let redirects = list("redirectUris")
        if redirects.isEmpty { problems.append("redirectUris: at least one") }
        let logouts = list("postLogoutRedirectUris")
        let scopes = Set(entry["scopes"] == nil ? ["openid"] : list("scopes"))
        var firstParty = false
        if let value = entry["firstParty"] {
            if let flag = value as? Bool { firstParty = flag } else { problems.append("firstParty: must be true or false") }
        }
        let algorithm = text("idTokenAlgorithm") ?? "ES256"
        let sector = text("sectorIdentifier")
        problems += Self.problems(
            name: name, isPublic: isPublic, redirectURIs: redirects, postLogoutRedirectURIs: logouts, scopes: scopes, idTokenAlgorithm: algorithm,
            sectorIdentifier: sector
        )
        return OpenIDClient(
            id: id, name: name, authentication: authentication, redirectURIs: redirects, postLogoutRedirectURIs: logouts, scopes: scopes,
            isFirstParty: firstParty, idTokenAlgorithm: algorithm, sectorIdentifier: sector
        )
    }

    /// The rules a client's settings follow wherever they come from, the clients file or the admin API: each problem
    /// named by its field (how many URIs a client may have is the caller's).
    static func problems(
        name: String, isPublic: Bool, redirectURIs: [String], postLogoutRedirectURIs: [String], scopes: Set<String>, idTokenAlgorithm: String,
        sectorIdentifier: String?
    ) -> [String] {
        var problems: [String] = []
        if name.isEmpty || name.count > 64 { problems.append("name: must be 1 to 64 characters") }
        for uri in redirectURIs where !isRedirectURI(uri, isPublic: isPublic) {
            problems.append("redirectUris: \"\(uri.prefix(80))\" must be an absolute URI without fragment: https, http on a loopback address, or (public clients) a private-use scheme such as org.example.app:/callback")
        }
        for uri in postLogoutRedirectURIs where !isRedirectURI(uri, isPublic: isPublic) {
            problems.append("postLogoutRedirectUris: \"\(uri.prefix(80))\" is not an acceptable redirect URI")
        }
        if !scopes.contains("openid") { problems.append("scopes: must include openid") }
        for scope in scopes.subtracting(OpenIDClient.supportedScopes).sorted().prefix(8) {
            problems.append("scopes: \"\(scope.prefix(40))\" is not one Konto offers (\(OpenIDClient.supportedScopes.sorted().joined(separator: ", ")))")
        }
        if !["ES256", "RS256"].contains(idTokenAlgorithm) { problems.append("idTokenAlgorithm: must be ES256 or RS256") }
        if let sectorIdentifier, sectorIdentifier.isEmpty || sectorIdentifier.utf8.count > 253 || sectorIdentifier.contains(where: { $0 == "/" || $0 == " " }) {
            problems.append("sectorIdentifier: must be a host name such as example.org")
        }
        return problems
    }

    static func isClientId(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count) && id.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-:".unicodeScalars.contains($0)) }
    }

    /// RFC 8252 and OAuth 2.1: https anywhere; http only on a loopback address (a native app's local server); a
    /// private-use scheme (reverse domain, with a dot) for public clients; never a fragment, never user info.
    static func isRedirectURI(_ text: String, isPublic: Bool) -> Bool {
        guard (1...512).contains(text.utf8.count), !text.contains("#"), let url = URL(string: text), let scheme = url.scheme?.lowercased(), url.user == nil else {
            return false
        }
        switch scheme {
        case "https": return !(url.host ?? "").isEmpty
        case "http": return ["127.0.0.1", "[::1]", "::1", "localhost"].contains(url.host?.lowercased() ?? "")
        default: return isPublic && scheme.contains(".") && !["javascript", "data", "file"].contains(scheme)
        }
    }

    /// The EC P-256 and RSA public keys of a JWK Set (private members refused: the file must hold public keys only).
    static func publicKeys(_ text: String) -> [IdentityJSONWebKey] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], let keys = object["keys"] as? [[String: Any]] else { return [] }
        return keys.compactMap { key in
            guard key["d"] == nil, key["p"] == nil, let kty = key["kty"] as? String else { return nil }
            switch kty {
            case "EC":
                guard key["crv"] as? String == "P-256", let x = key["x"] as? String, let y = key["y"] as? String else { return nil }
                let thumbprint = OpenIDSigningKey.thumbprint(kty: "EC", members: ["crv": "P-256", "x": x, "y": y])
                return IdentityJSONWebKey(kty: "EC", kid: key["kid"] as? String ?? thumbprint, alg: "ES256", crv: "P-256", x: x, y: y)
            case "RSA":
                guard let n = key["n"] as? String, let e = key["e"] as? String else { return nil }
                let thumbprint = OpenIDSigningKey.thumbprint(kty: "RSA", members: ["n": n, "e": e])
                return IdentityJSONWebKey(kty: "RSA", kid: key["kid"] as? String ?? thumbprint, alg: key["alg"] as? String ?? "RS256", n: n, e: e)
            default:
                return nil
            }
        }
    }

    private func read(_ path: String, directory: String, field: String, problems: inout [String]) -> String? {
        let full = path.hasPrefix("/") ? path : directory + "/" + path
        guard let data = FileManager.default.contents(atPath: full), let text = String(data: data, encoding: .utf8) else {
            problems.append("\(field): cannot read \(full)")
            return nil
        }
        return text
    }
}

/// A clients file (`KONTO_IDENTITY_OIDC_CLIENTS`) Identity cannot use: it refuses to start, naming every problem, each
/// with the client it concerns.
public struct OpenIDClientsError: Error, Sendable, Equatable, CustomStringConvertible {
    public static let code = "configuration.invalidOpenIDClients"

    public let source: String
    public let problems: [String]

    public init(source: String, problems: [String]) {
        self.source = source
        self.problems = problems
    }

    public var description: String {
        problems.map { "\(source): \($0)" }.joined(separator: "\n")
    }
}

import Crypto
import Foundation
import KontoModel
import Yams

/// Reads the providers file (`KONTO_IDENTITY_PROVIDERS`, YAML or JSON by extension):
///
/// ```yaml
/// linkByVerifiedEmail: false
/// providers:
///   - name: apple
///     type: apple
///     clientId: org.example.web          # the Services ID (web sign-in)
///     audiences: [org.example.app]       # the apps' bundle ids (native sign-in)
///     teamId: ABCDE12345
///     keyId: XYZ987ABCD
///     privateKeyFile: /run/secrets/apple.p8
///   - name: example
///     issuer: https://id.example.org
///     clientId: konto
///     clientSecretFile: /run/secrets/example-oidc
/// ```
///
/// Every problem is collected before the file is refused, as the key schema's loader does.
public struct IdentityProvidersLoader: Sendable {
    public init() {}

    public func load(path: String) throws(IdentityProvidersError) -> IdentityProviders {
        let url = URL(fileURLWithPath: path)
        let source = url.lastPathComponent
        guard let data = try? Data(contentsOf: url) else {
            throw IdentityProvidersError(source: source, problems: ["cannot read file at \(path)"])
        }
        let json: Bool
        switch url.pathExtension.lowercased() {
        case "json": json = true
        case "yaml", "yml": json = false
        default: throw IdentityProvidersError(source: source, problems: ["unsupported file type (expected .yaml, .yml or .json)"])
        }
        return try load(data: data, json: json, source: source, directory: url.deletingLastPathComponent().path)
    }

    /// - Parameter directory: where relative key and secret file paths are looked for.
    public func load(data: Data, json: Bool, source: String, directory: String) throws(IdentityProvidersError) -> IdentityProviders {
        let file: ProvidersFile
        do {
            if json {
                file = try JSONDecoder().decode(ProvidersFile.self, from: data)
            } else {
                guard let text = String(data: data, encoding: .utf8) else {
                    throw IdentityProvidersError(source: source, problems: ["not UTF-8 text"])
                }
                file = try YAMLDecoder().decode(ProvidersFile.self, from: text)
            }
        } catch let error as IdentityProvidersError {
            throw error
        } catch let DecodingError.keyNotFound(key, context) {
            throw IdentityProvidersError(source: source, problems: ["\(Self.path(context.codingPath + [key])): missing"])
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context), let DecodingError.dataCorrupted(context) {
            throw IdentityProvidersError(source: source, problems: ["\(Self.path(context.codingPath)): \(context.debugDescription)"])
        } catch {
            throw IdentityProvidersError(source: source, problems: ["not a providers file: \(error)"])
        }
        var problems: [String] = []
        // Unknown fields are refused, not skipped: a misspelt `clientSecretFile` would otherwise leave a provider
        // without its secret and fail only at the first sign-in.
        if let keys = try? (json ? JSONDecoder().decode(FieldNames.self, from: data) : YAMLDecoder().decode(FieldNames.self, from: String(decoding: data, as: UTF8.self))) {
            problems += keys.top.subtracting(Self.fileFields).sorted().map { "\($0): unknown field (expected \(Self.fileFields.sorted().joined(separator: ", ")))" }
            for (index, fields) in keys.providers.enumerated() {
                let label = file.providers.indices.contains(index) ? file.providers[index].name.map { "provider \"\($0)\"" } ?? "providers[\(index)]" : "providers[\(index)]"
                problems += fields.subtracting(Self.providerFields).sorted().map { "\(label): \($0): unknown field" }
            }
        }
        var providers: [IdentityProvider] = []
        var names: Set<String> = []
        for (index, entry) in file.providers.enumerated() {
            let label = entry.name.map { "provider \"\($0)\"" } ?? "providers[\(index)]"
            var own: [String] = []
            if let provider = provider(entry, directory: directory, problems: &own) {
                if !names.insert(provider.name).inserted {
                    own.append("name: used by another provider")
                }
                providers.append(provider)
            }
            problems += own.map { "\(label): \($0)" }
        }
        guard problems.isEmpty else { throw IdentityProvidersError(source: source, problems: problems) }
        return IdentityProviders(providers, linkByVerifiedEmail: file.linkByVerifiedEmail ?? false)
    }

    private func provider(_ entry: ProviderEntry, directory: String, problems: inout [String]) -> IdentityProvider? {
        let isApple: Bool
        switch entry.type ?? "oidc" {
        case "oidc": isApple = false
        case "apple": isApple = true
        case let other: problems.append("type: \"\(other.prefix(40))\" is not oidc or apple"); return nil
        }
        let name = entry.name ?? ""
        if !IdentityProviderName.isValid(name) {
            problems.append("name: must be 1 to 32 lower-case letters, digits or dashes")
        }
        let issuer = entry.issuer ?? (isApple ? IdentityProvider.appleIssuer : "")
        if !ProviderURL.isAcceptable(issuer, allowingQuery: false) {
            problems.append("issuer: must be an https URL without query or fragment (http only on localhost or 127.0.0.1)")
        }
        let clientId = entry.clientId ?? ""
        if clientId.isEmpty || clientId.utf8.count > 255 {
            problems.append("clientId: must be 1 to 255 characters")
        }
        for audience in entry.audiences ?? [] where audience.isEmpty || audience.utf8.count > 255 {
            problems.append("audiences: each must be 1 to 255 characters")
        }
        let scopes = entry.scopes ?? (isApple ? ["openid", "name", "email"] : ["openid", "email", "profile"])
        for scope in scopes where scope.isEmpty || scope.contains(where: { $0 == " " || !$0.isASCII }) {
            problems.append("scopes: \"\(scope.prefix(40))\" is not a scope (ASCII without spaces)")
        }
        var authentication = IdentityProvider.ClientAuthentication.none
        if isApple {
            for (field, value) in [("teamId", entry.teamId), ("keyId", entry.keyId)] where (value ?? "").isEmpty {
                problems.append("\(field): missing (Apple's client secret is signed with the team's key)")
            }
            if entry.clientSecret != nil || entry.clientSecretFile != nil {
                problems.append("clientSecret: Apple has none; give teamId, keyId and privateKeyFile")
            }
            if let path = entry.privateKeyFile {
                if let pem = read(path, directory: directory, field: "privateKeyFile", problems: &problems) {
                    do {
                        let key = try P256.Signing.PrivateKey(pemRepresentation: pem)
                        authentication = .appleKey(teamId: entry.teamId ?? "", keyId: entry.keyId ?? "", privateKey: key)
                    } catch {
                        problems.append("privateKeyFile: not a P-256 private key in PEM (Apple's .p8)")
                    }
                }
            } else {
                problems.append("privateKeyFile: missing (Apple's client secret is signed with the team's key)")
            }
        } else {
            if entry.teamId != nil || entry.keyId != nil || entry.privateKeyFile != nil {
                problems.append("teamId, keyId, privateKeyFile: only for type apple")
            }
            switch (entry.clientSecret, entry.clientSecretFile) {
            case let (secret?, nil):
                authentication = .secret(SecretString(secret))
            case let (nil, path?):
                if let text = read(path, directory: directory, field: "clientSecretFile", problems: &problems) {
                    let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
                    if secret.isEmpty { problems.append("clientSecretFile: the file is empty") }
                    authentication = .secret(SecretString(secret))
                }
            case (nil, nil):
                authentication = .none
            case (_?, _?):
                problems.append("clientSecret, clientSecretFile: give one of them")
            }
        }
        for host in entry.endpointHosts ?? [] where host.isEmpty || host.utf8.count > 253 || host.contains(where: { $0 == "/" || $0 == ":" || $0 == "@" || $0.isWhitespace }) {
            problems.append("endpointHosts: \"\(host.prefix(64))\" is not a host name")
        }
        if let displayName = entry.displayName, displayName.isEmpty || displayName.count > 64 {
            problems.append("displayName: must be 1 to 64 characters")
        }
        return IdentityProvider(
            name: name,
            displayName: entry.displayName ?? (isApple ? "Apple" : name),
            issuer: issuer,
            clientId: clientId,
            authentication: authentication,
            scopes: scopes,
            audiences: entry.audiences ?? [],
            hashedNonce: entry.hashedNonce ?? isApple,
            isApple: isApple,
            endpointHosts: entry.endpointHosts ?? []
        )
    }

    private func read(_ path: String, directory: String, field: String, problems: inout [String]) -> String? {
        let full = path.hasPrefix("/") ? path : directory + "/" + path
        guard let data = FileManager.default.contents(atPath: full), let text = String(data: data, encoding: .utf8) else {
            problems.append("\(field): cannot read \(full)")
            return nil
        }
        return text
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().drop { $0 == "." }.description
    }

    private static let fileFields: Set<String> = ["linkByVerifiedEmail", "providers"]
    private static let providerFields: Set<String> = [
        "name", "type", "displayName", "issuer", "clientId", "clientSecret", "clientSecretFile", "teamId", "keyId",
        "privateKeyFile", "scopes", "audiences", "hashedNonce", "endpointHosts",
    ]

    /// The field names the file uses, at the top and in each provider.
    private struct FieldNames: Decodable {
        var top: Set<String>
        var providers: [Set<String>]

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        struct Entry: Decodable {
            var names: Set<String>
            init(from decoder: any Decoder) throws {
                names = Set(try decoder.container(keyedBy: Key.self).allKeys.map(\.stringValue))
            }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            top = Set(container.allKeys.map(\.stringValue))
            providers = (try? container.decode([Entry].self, forKey: Key(stringValue: "providers")).map(\.names)) ?? []
        }
    }

    private struct ProvidersFile: Decodable {
        var linkByVerifiedEmail: Bool?
        var providers: [ProviderEntry]
    }

    private struct ProviderEntry: Decodable {
        var name: String?
        var type: String?
        var displayName: String?
        var issuer: String?
        var clientId: String?
        var clientSecret: String?
        var clientSecretFile: String?
        var teamId: String?
        var keyId: String?
        var privateKeyFile: String?
        var scopes: [String]?
        var audiences: [String]?
        var hashedNonce: Bool?
        var endpointHosts: [String]?
    }
}

/// A provider's name: what URLs and stored identities carry.
enum IdentityProviderName {
    static func isValid(_ name: String) -> Bool {
        (1...32).contains(name.utf8.count) && name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
    }
}

import Foundation
import KontoModel

/// An OpenID Provider client's settings as an operator gives them through the admin API (docs/OIDC.md, "Clients
/// through the admin API"): the clients file's fields, its secret made by Identity (never given), its public keys
/// given inline rather than as a file.
public struct IdentityOpenIDClientSettings: Codable, Sendable, Equatable {
    public var name: String
    /// `public` or `confidential`.
    public var type: String
    /// A confidential client's: `client_secret_basic`, `client_secret_post` or `private_key_jwt`; nil for a public one.
    public var authentication: String?
    /// `private_key_jwt`'s public keys (EC P-256 or RSA).
    public var jwks: [IdentityJSONWebKey]?
    public var redirectURIs: [String]
    public var postLogoutRedirectURIs: [String]
    public var scopes: [String]
    public var firstParty: Bool
    /// `ES256` or `RS256`.
    public var idTokenAlgorithm: String
    public var sectorIdentifier: String?

    public init(
        name: String, type: String, authentication: String? = nil, jwks: [IdentityJSONWebKey]? = nil, redirectURIs: [String],
        postLogoutRedirectURIs: [String] = [], scopes: [String] = ["openid"], firstParty: Bool = false, idTokenAlgorithm: String = "ES256",
        sectorIdentifier: String? = nil
    ) {
        self.name = name
        self.type = type
        self.authentication = authentication
        self.jwks = jwks
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.scopes = scopes
        self.firstParty = firstParty
        self.idTokenAlgorithm = idTokenAlgorithm
        self.sectorIdentifier = sectorIdentifier
    }

    /// The settings a person's consent was given for that `self` changes from `previous` (their JSON names): the
    /// redirect URIs, the scopes, first-party (skipping the consent page). A change of any ends the client's consents.
    public func consentChanges(from previous: IdentityOpenIDClientSettings) -> [String] {
        var changed: [String] = []
        if Set(redirectURIs) != Set(previous.redirectURIs) { changed.append(CodingKeys.redirectURIs.rawValue) }
        if Set(scopes) != Set(previous.scopes) { changed.append(CodingKeys.scopes.rawValue) }
        if firstParty != previous.firstParty { changed.append(CodingKeys.firstParty.rawValue) }
        return changed
    }

    enum CodingKeys: String, CodingKey {
        case name, type, authentication, jwks, scopes, firstParty, idTokenAlgorithm, sectorIdentifier
        case redirectURIs = "redirectUris"
        case postLogoutRedirectURIs = "postLogoutRedirectUris"
    }
}

/// Where a client comes from: the deployment's clients file (changed only there) or the admin API.
public enum IdentityOpenIDClientSource: String, Codable, Sendable {
    case file
    case api
}

/// A registered client as listed: its settings and dates; never its secret or the secret's digest.
public struct IdentityOpenIDClientInfo: Codable, Sendable, Equatable {
    public var id: String
    public var source: IdentityOpenIDClientSource
    public var settings: IdentityOpenIDClientSettings
    /// The API's clients only.
    public var createdAt: Timestamp?
    public var updatedAt: Timestamp?
    /// When its secret was last made (the API's secret clients).
    public var secretCreatedAt: Timestamp?
    /// Until when the secret it had before its last rotation is still accepted.
    public var previousSecretExpiresAt: Timestamp?

    public init(
        id: String, source: IdentityOpenIDClientSource, settings: IdentityOpenIDClientSettings, createdAt: Timestamp? = nil, updatedAt: Timestamp? = nil,
        secretCreatedAt: Timestamp? = nil, previousSecretExpiresAt: Timestamp? = nil
    ) {
        self.id = id
        self.source = source
        self.settings = settings
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.secretCreatedAt = secretCreatedAt
        self.previousSecretExpiresAt = previousSecretExpiresAt
    }
}

/// Lists the registered clients: the file's, then the API's.
public struct IdentityOpenIDClientsRequest: Codable, Sendable {
    public var operatorCall: IdentityOperatorCall

    public init(operatorCall: IdentityOperatorCall) {
        self.operatorCall = operatorCall
    }
}

public struct IdentityOpenIDClientList: Codable, Sendable, Equatable {
    public var clients: [IdentityOpenIDClientInfo]

    public init(clients: [IdentityOpenIDClientInfo]) {
        self.clients = clients
    }
}

/// Registers a client (``IdentityContract/createOpenIDClient``) or replaces one's settings
/// (``IdentityContract/updateOpenIDClient``: its type and secret stay; its id never changes).
public struct IdentityOpenIDClientRequest: Codable, Sendable {
    public var operatorCall: IdentityOperatorCall
    public var clientId: String
    public var settings: IdentityOpenIDClientSettings

    public init(operatorCall: IdentityOperatorCall, clientId: String, settings: IdentityOpenIDClientSettings) {
        self.operatorCall = operatorCall
        self.clientId = clientId
        self.settings = settings
    }
}

/// A client registered or its secret rotated: the secret (a secret client's) shown this once; Identity keeps its
/// SHA-256 only.
public struct IdentityOpenIDClientSaved: Codable, Sendable {
    public var client: IdentityOpenIDClientInfo
    public var secret: BearerToken?

    public init(client: IdentityOpenIDClientInfo, secret: BearerToken?) {
        self.client = client
        self.secret = secret
    }
}

/// Names one client (to remove it).
public struct IdentityOpenIDClientIdRequest: Codable, Sendable {
    public var operatorCall: IdentityOperatorCall
    public var clientId: String

    public init(operatorCall: IdentityOperatorCall, clientId: String) {
        self.operatorCall = operatorCall
        self.clientId = clientId
    }
}

/// Rotates a secret client's secret. The previous secret is still accepted for `keepPreviousSeconds` (0: not at
/// all; at most ``maximumOverlapSeconds``), so the application's servers can take the new one without an outage.
public struct IdentityRotateOpenIDClientSecretRequest: Codable, Sendable {
    public static let maximumOverlapSeconds = 7 * 24 * 3_600

    public var operatorCall: IdentityOperatorCall
    public var clientId: String
    public var keepPreviousSeconds: Int

    public init(operatorCall: IdentityOperatorCall, clientId: String, keepPreviousSeconds: Int = 0) {
        self.operatorCall = operatorCall
        self.clientId = clientId
        self.keepPreviousSeconds = keepPreviousSeconds
    }
}

/// A client removed: what it held ended with it.
public struct IdentityOpenIDClientRemoved: Codable, Sendable, Equatable {
    /// Grants (with their refresh tokens) ended, of every account.
    public var grantsEnded: Int
    /// Consents owners had given it.
    public var consentsRemoved: Int

    public init(grantsEnded: Int, consentsRemoved: Int) {
        self.grantsEnded = grantsEnded
        self.consentsRemoved = consentsRemoved
    }
}

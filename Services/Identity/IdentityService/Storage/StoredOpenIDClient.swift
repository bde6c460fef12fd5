import KontoContracts
import KontoModel

/// An OpenID Provider client registered through the admin API: its settings, and its secret's SHA-256 (never the
/// secret). During a rotation's overlap the previous secret's digest is kept too, until `previousSecretExpiresAt`.
public struct StoredOpenIDClient: Sendable, Equatable {
    public var id: String
    public var settings: IdentityOpenIDClientSettings
    public var secretDigest: [UInt8]?
    public var secretCreatedAt: Timestamp?
    public var previousSecretDigest: [UInt8]?
    public var previousSecretExpiresAt: Timestamp?
    public var createdAt: Timestamp
    public var updatedAt: Timestamp

    public init(
        id: String, settings: IdentityOpenIDClientSettings, secretDigest: [UInt8]?, secretCreatedAt: Timestamp?, previousSecretDigest: [UInt8]? = nil,
        previousSecretExpiresAt: Timestamp? = nil, createdAt: Timestamp, updatedAt: Timestamp
    ) {
        self.id = id
        self.settings = settings
        self.secretDigest = secretDigest
        self.secretCreatedAt = secretCreatedAt
        self.previousSecretDigest = previousSecretDigest
        self.previousSecretExpiresAt = previousSecretExpiresAt
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// How ``OpenIDStorage/createOpenIDClient(_:limit:)`` ended.
public enum OpenIDClientCreation: Sendable, Equatable {
    case created
    case idTaken
    case limitReached
}

/// How ``OpenIDStorage/updateOpenIDClient(id:settings:mayChangeFirstParty:at:)`` ended.
public enum OpenIDClientUpdate: Sendable, Equatable {
    /// Changed: the client now, what of its consents' subject changed and how many consents ended with it.
    case updated(StoredOpenIDClient, changed: [String], consentsEnded: Int)
    case notFound
    /// The client is first-party and the change was not allowed to touch one.
    case firstPartyRefused
}

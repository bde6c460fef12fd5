import KontoModel

/// A third-party client the owner let have some scopes, remembered so the consent page is not shown again for them.
public struct StoredOpenIDConsent: Sendable, Equatable {
    public var accountId: String
    public var clientId: String
    public var scopes: [String]
    public var grantedAt: Timestamp

    public init(accountId: String, clientId: String, scopes: [String], grantedAt: Timestamp) {
        self.accountId = accountId
        self.clientId = clientId
        self.scopes = scopes
        self.grantedAt = grantedAt
    }
}

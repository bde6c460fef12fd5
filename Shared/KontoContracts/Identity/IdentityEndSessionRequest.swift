import KontoModel

/// Ends one session of the caller's account (``IdentityContract/endSession``). Ending the caller's own is a logout;
/// ending another is security-related: a privileged session or the current password (a stolen session must not
/// sign its owner out of their other devices).
public struct IdentityEndSessionRequest: Codable, Sendable {
    public var token: BearerToken
    public var sessionId: String
    public var currentPassword: SecretString?

    public init(token: BearerToken, sessionId: String, currentPassword: SecretString? = nil) {
        self.token = token
        self.sessionId = sessionId
        self.currentPassword = currentPassword
    }
}

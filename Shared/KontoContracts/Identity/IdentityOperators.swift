import Foundation
import KontoModel

/// What an operator key allows (docs/ADMIN.md, "Scopes"). A key holds a set of them; each admin action needs one.
public enum OperatorScope: String, Codable, Sendable, CaseIterable, Comparable {
    case accountsRead = "accounts:read"
    case accountsWrite = "accounts:write"
    case sessionsWrite = "sessions:write"
    case factorsWrite = "factors:write"
    case auditRead = "audit:read"
    case deliveriesWrite = "deliveries:write"
    case keysWrite = "keys:write"
    /// The OpenID Provider's clients registered through the admin API (docs/OIDC.md).
    case clientsWrite = "clients:write"
    /// Beside clients:write: registering, changing or giving a new secret to a first-party client (one that skips the
    /// consent page). Without it a client key could send people's sign-ins to a redirect URI of its own, unasked.
    case clientsFirstParty = "clients:firstParty"

    public static func < (lhs: OperatorScope, rhs: OperatorScope) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// An operator key as text: `kop_`, the key's id (32 lowercase hex digits) and its secret (32 random bytes,
/// unpadded base64url, 43 characters). The id lets Identity find the one stored hash to compare with in constant time;
/// the secret is shown once and stored only as its SHA-256.
public struct OperatorKeyText: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public static let prefix = "kop_"
    /// Every key's length; anything else is refused before it is looked at further.
    public static let length = 4 + 32 + 43

    /// The key's id (a UUID's 32 hex digits, lowercase).
    public let keyId: String
    /// The secret's 32 bytes.
    public let secret: [UInt8]

    public init(keyId: String, secret: [UInt8]) {
        self.keyId = keyId
        self.secret = secret
    }

    /// Never the secret: a key printed or logged shows its id only.
    public var description: String { "OperatorKeyText(\(keyId), <redacted>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["keyId": keyId]) }

    /// A new key: a fresh id and 32 random bytes from the system's generator.
    public static func generate() -> OperatorKeyText {
        var generator = SystemRandomNumberGenerator()
        let id = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        return OperatorKeyText(keyId: id, secret: (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// The key in its text form, shown to the operator once.
    public var text: String {
        Self.prefix + keyId + Data(secret).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Parses a presented key; nil for anything not shaped as one (checked by length and alphabet before decoding).
    public init?(parsing text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == Self.length, text.hasPrefix(Self.prefix) else { return nil }
        let id = bytes[4..<36]
        guard id.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }) else { return nil }
        let encoded = bytes[36...]
        guard encoded.allSatisfy({ $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else { return nil }
        let base64 = String(decoding: encoded, as: UTF8.self).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "="
        guard let secret = Data(base64Encoded: base64), secret.count == 32 else { return nil }
        self.keyId = String(decoding: id, as: UTF8.self)
        self.secret = Array(secret)
    }
}

/// Who makes an admin call: the operator key as presented (checked by Identity on every call, whoever forwards it),
/// and the client's address (throttling refused keys; the audit).
public struct IdentityOperatorCall: Codable, Sendable {
    public var key: SecretString
    public var clientAddress: String?

    public init(key: SecretString, clientAddress: String? = nil) {
        self.key = key
        self.clientAddress = clientAddress
    }
}

/// Asks whether a key holds a scope (for actions another service carries out, and the admin console's sign-in).
public struct IdentityOperatorAuthorizeRequest: Codable, Sendable {
    public var operatorCall: IdentityOperatorCall
    /// The scope needed; nil: any valid key.
    public var scope: OperatorScope?
    /// What the caller is about to do with the key's authority (e.g. `deliveries.redeliver webhook:crm`), for the
    /// audit log's entry of the call; at most ``maximumActionLength`` characters.
    public var action: String?
    /// True: the key is checked before the caller reads the request it came with (the gateway's admin listener, so an
    /// unauthenticated caller learns nothing of what a request must look like). A refusal is recorded and counted as
    /// any is; a success writes no audit entry (the call that follows writes its own). Absent: false.
    public var gate: Bool?

    public static let maximumActionLength = 200

    public init(operatorCall: IdentityOperatorCall, scope: OperatorScope?, action: String? = nil, gate: Bool? = nil) {
        self.operatorCall = operatorCall
        self.scope = scope
        self.action = action
        self.gate = gate
    }
}

/// The key that made a call: its id, name and scopes.
public struct IdentityOperator: Codable, Sendable, Equatable {
    public var keyId: String
    public var name: String
    public var scopes: [OperatorScope]

    public init(keyId: String, name: String, scopes: [OperatorScope]) {
        self.keyId = keyId
        self.name = name
        self.scopes = scopes
    }
}

/// An operator key as listed: never its secret or hash.
public struct IdentityOperatorKey: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var scopes: [OperatorScope]
    public var createdAt: Timestamp
    /// The key that created it; nil for one made from the command line against the database.
    public var createdBy: String?
    public var expiresAt: Timestamp?
    public var lastUsedAt: Timestamp?
    public var revokedAt: Timestamp?

    public init(
        id: String, name: String, scopes: [OperatorScope], createdAt: Timestamp, createdBy: String?, expiresAt: Timestamp?,
        lastUsedAt: Timestamp?, revokedAt: Timestamp?
    ) {
        self.id = id
        self.name = name
        self.scopes = scopes
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.expiresAt = expiresAt
        self.lastUsedAt = lastUsedAt
        self.revokedAt = revokedAt
    }
}

public struct IdentityOperatorKeys: Codable, Sendable, Equatable {
    public var keys: [IdentityOperatorKey]

    public init(keys: [IdentityOperatorKey]) {
        self.keys = keys
    }
}

/// Creates a key. Its scopes must be among the creating key's (no key makes a stronger one).
public struct IdentityCreateOperatorKeyRequest: Codable, Sendable {
    public static let maximumNameLength = 100

    public var operatorCall: IdentityOperatorCall
    public var name: String
    public var scopes: [OperatorScope]
    public var expiresAt: Timestamp?

    public init(operatorCall: IdentityOperatorCall, name: String, scopes: [OperatorScope], expiresAt: Timestamp? = nil) {
        self.operatorCall = operatorCall
        self.name = name
        self.scopes = scopes
        self.expiresAt = expiresAt
    }
}

/// A new key: its record and its text, shown this once.
public struct IdentityOperatorKeyCreated: Codable, Sendable {
    public var key: IdentityOperatorKey
    /// Travels as a plain string (an answer, as a TOTP secret does) and never prints.
    public var secret: BearerToken

    public init(key: IdentityOperatorKey, secret: BearerToken) {
        self.key = key
        self.secret = secret
    }
}

/// Names one key (to revoke it).
public struct IdentityOperatorKeyRequest: Codable, Sendable {
    public var operatorCall: IdentityOperatorCall
    public var keyId: String

    public init(operatorCall: IdentityOperatorCall, keyId: String) {
        self.operatorCall = operatorCall
        self.keyId = keyId
    }
}

/// Lists keys (revoked ones too, so an operator sees what was).
public struct IdentityOperatorKeysRequest: Codable, Sendable {
    public var operatorCall: IdentityOperatorCall

    public init(operatorCall: IdentityOperatorCall) {
        self.operatorCall = operatorCall
    }
}

/// An account search: every filter given must hold. Newest accounts first (created, then id), in pages.
public struct IdentityAccountSearchRequest: Codable, Sendable {
    public static let maximumLimit = 200
    public static let maximumQueryLength = 320

    public var operatorCall: IdentityOperatorCall
    /// The userId begins with this (case-insensitive).
    public var userIdPrefix: String?
    /// The userId contains this (case-insensitive).
    public var userIdContains: String?
    public var verified: Bool?
    /// Disabled by an operator, or not.
    public var disabled: Bool?
    public var anonymous: Bool?
    public var createdAfter: Timestamp?
    public var createdBefore: Timestamp?
    public var hasSecondFactor: Bool?
    /// Has an identity linked from this provider.
    public var provider: String?
    /// Where the previous page ended (its `nextCursor`).
    public var cursor: String?
    public var limit: Int?

    public init(
        operatorCall: IdentityOperatorCall, userIdPrefix: String? = nil, userIdContains: String? = nil, verified: Bool? = nil, disabled: Bool? = nil,
        anonymous: Bool? = nil,
        createdAfter: Timestamp? = nil, createdBefore: Timestamp? = nil, hasSecondFactor: Bool? = nil, provider: String? = nil,
        cursor: String? = nil, limit: Int? = nil
    ) {
        self.operatorCall = operatorCall
        self.userIdPrefix = userIdPrefix
        self.userIdContains = userIdContains
        self.verified = verified
        self.disabled = disabled
        self.anonymous = anonymous
        self.createdAfter = createdAfter
        self.createdBefore = createdBefore
        self.hasSecondFactor = hasSecondFactor
        self.provider = provider
        self.cursor = cursor
        self.limit = limit
    }
}

/// One account as a search lists it.
public struct IdentityAccountSummary: Codable, Sendable, Equatable {
    public var accountId: String
    public var userId: String?
    public var anonymous: Bool
    public var verified: Bool
    public var disabled: Bool
    public var createdAt: Timestamp

    public init(accountId: String, userId: String?, anonymous: Bool, verified: Bool, disabled: Bool = false, createdAt: Timestamp) {
        self.accountId = accountId
        self.userId = userId
        self.anonymous = anonymous
        self.verified = verified
        self.disabled = disabled
        self.createdAt = createdAt
    }
}

public struct IdentityAccountSearchPage: Codable, Sendable, Equatable {
    public var accounts: [IdentityAccountSummary]
    /// Where the next page starts; nil on the last.
    public var nextCursor: String?
    /// How many accounts match: exact up to ``IdentityAccountSearchPage/exactCountLimit``, the database's estimate above.
    public var totalEstimate: Int
    public var totalIsExact: Bool

    public static let exactCountLimit = 10_000

    public init(accounts: [IdentityAccountSummary], nextCursor: String?, totalEstimate: Int, totalIsExact: Bool) {
        self.accounts = accounts
        self.nextCursor = nextCursor
        self.totalEstimate = totalEstimate
        self.totalIsExact = totalIsExact
    }
}

/// One of an account's second factors, for an operator (the help desk removing a factor its owner lost).
public struct IdentityAccountFactorRequest: Codable, Sendable {
    public var operatorCall: IdentityOperatorCall
    public var accountId: String
    public var factorId: String

    public init(operatorCall: IdentityOperatorCall, accountId: String, factorId: String) {
        self.operatorCall = operatorCall
        self.accountId = accountId
        self.factorId = factorId
    }
}

/// One of an account's linked provider identities, for an operator (unlinking one).
public struct IdentityAccountIdentityRequest: Codable, Sendable {
    public var operatorCall: IdentityOperatorCall
    public var accountId: String
    public var identityId: String

    public init(operatorCall: IdentityOperatorCall, accountId: String, identityId: String) {
        self.operatorCall = operatorCall
        self.accountId = accountId
        self.identityId = identityId
    }
}

/// An operator's call about one account (its record, its sessions, disabling, enabling, deletion, a reset mail); the
/// method says which, and the scope it needs.
public struct IdentityOperatorAccountRequest: Codable, Sendable {
    public var operatorCall: IdentityOperatorCall
    public var accountId: String

    public init(operatorCall: IdentityOperatorCall, accountId: String) {
        self.operatorCall = operatorCall
        self.accountId = accountId
    }
}

/// What Identity holds about an account, as an operator may see it: metadata only, never a secret, hash or token.
public struct IdentityAccountRecord: Codable, Sendable, Equatable {
    public struct Factor: Codable, Sendable, Equatable {
        public var id: String
        public var kind: String
        public var name: String?
        public var createdAt: Timestamp

        public init(id: String, kind: String, name: String?, createdAt: Timestamp) {
            self.id = id
            self.kind = kind
            self.name = name
            self.createdAt = createdAt
        }
    }

    public struct Identity: Codable, Sendable, Equatable {
        public var id: String
        public var provider: String
        public var createdAt: Timestamp
        public var lastUsedAt: Timestamp?

        public init(id: String, provider: String, createdAt: Timestamp, lastUsedAt: Timestamp?) {
            self.id = id
            self.provider = provider
            self.createdAt = createdAt
            self.lastUsedAt = lastUsedAt
        }
    }

    /// The facts the account assembler puts into every account (accountId, userId, anonymity, verification).
    public var facts: IdentityAccountFacts
    public var createdAt: Timestamp
    public var hasPassword: Bool
    /// When an operator disabled it; absent while it is enabled.
    public var disabledAt: Timestamp?
    /// When the account last signed in (its latest known client's success), if it ever did.
    public var lastSignInAt: Timestamp?
    public var verifiedAt: Timestamp?
    public var factors: [Factor]
    public var identities: [Identity]
    public var sessionCount: Int

    public init(
        facts: IdentityAccountFacts, createdAt: Timestamp, hasPassword: Bool, disabledAt: Timestamp? = nil, lastSignInAt: Timestamp?, verifiedAt: Timestamp?, factors: [Factor],
        identities: [Identity], sessionCount: Int
    ) {
        self.facts = facts
        self.createdAt = createdAt
        self.hasPassword = hasPassword
        self.disabledAt = disabledAt
        self.lastSignInAt = lastSignInAt
        self.verifiedAt = verifiedAt
        self.factors = factors
        self.identities = identities
        self.sessionCount = sessionCount
    }
}

/// One live session as an operator sees it: never its token.
/// One live session of an account, never its token: as an operator sees it (``IdentityContract/accountSessions``) and
/// as its owner does (``IdentityContract/listSessions``, which marks the caller's own as `current`).
public struct IdentityAccountSessionSummary: Codable, Sendable, Equatable {
    public var id: String
    public var createdAt: Timestamp
    /// When it was last used, to within ``IdentityOptions`` `sessionTouchInterval` (a minute); a session made before
    /// Konto kept it has none.
    public var lastUsedAt: Timestamp?
    public var idleExpiresAt: Timestamp
    public var absoluteExpiresAt: Timestamp
    /// 1: a first factor; 2: a second factor or a passkey too.
    public var assuranceLevel: Int
    public var privilegedUntil: Timestamp?
    /// How it was signed in: `password`, `emailCode`, `passkey`, `secondFactor` (a first factor, then a second),
    /// `provider:<id>`, `signUp`, `anonymous`.
    public var signInMethod: String?
    /// The client's address when it signed in, coarse: its IPv4 /24 or IPv6 /48 network, never the host.
    public var clientAddress: String?
    /// What the client called itself when it signed in (its User-Agent), at most 256 characters.
    public var clientName: String?
    /// The session the request was made with (the owner's list only).
    public var current: Bool?

    public init(
        id: String, createdAt: Timestamp, lastUsedAt: Timestamp? = nil, idleExpiresAt: Timestamp, absoluteExpiresAt: Timestamp, assuranceLevel: Int,
        privilegedUntil: Timestamp?, signInMethod: String? = nil, clientAddress: String? = nil, clientName: String? = nil, current: Bool? = nil
    ) {
        self.id = id
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.idleExpiresAt = idleExpiresAt
        self.absoluteExpiresAt = absoluteExpiresAt
        self.assuranceLevel = assuranceLevel
        self.privilegedUntil = privilegedUntil
        self.signInMethod = signInMethod
        self.clientAddress = clientAddress
        self.clientName = clientName
        self.current = current
    }
}

public struct IdentityAccountSessions: Codable, Sendable, Equatable {
    public var sessions: [IdentityAccountSessionSummary]

    public init(sessions: [IdentityAccountSessionSummary]) {
        self.sessions = sessions
    }
}

/// Ends one of an account's sessions, or all of them (no `sessionId`), for an operator (scope `sessions:write`).
public struct IdentityEndAccountSessionsRequest: Codable, Sendable {
    public var operatorCall: IdentityOperatorCall
    public var accountId: String
    public var sessionId: String?

    public init(operatorCall: IdentityOperatorCall, accountId: String, sessionId: String? = nil) {
        self.operatorCall = operatorCall
        self.accountId = accountId
        self.sessionId = sessionId
    }
}

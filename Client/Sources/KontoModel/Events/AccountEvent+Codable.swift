import Foundation

extension AccountEvent: Codable {
    private enum CodingKeys: String, CodingKey {
        case id
        case type
        case time
        case accountId
        case details
        case keys
        case previous
        case new
        case userId
        case sealedToken
        case sealedCode
        case expiresAt
        case factorId
        case factorType
        case remaining
        case message
        case to
        case values
        case identityId
        case provider
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        let kind: Kind = switch type {
        // Events stored before events were thin (with details, or previous and new details) still decode: the details
        // are dropped, and the changed keys worked out from the two versions.
        case "associatedAccount": .associatedAccount
        case "accountDisabled": .accountDisabled
        case "accountEnabled": .accountEnabled
        case "detailsChanged":
            if let keys = try container.decodeIfPresent([String].self, forKey: .keys) {
                .detailsChanged(keys: keys)
            } else {
                .detailsChanged(keys: Self.changedKeys(
                    previous: try container.decode(AccountDetails.self, forKey: .previous),
                    new: try container.decode(AccountDetails.self, forKey: .new)
                ))
            }
        case "disassociatingAccount": .disassociatingAccount
        case "deletingAccount": .deletingAccount
        case "passwordResetRequested":
            .passwordResetRequested(
                userId: try container.decode(String.self, forKey: .userId),
                token: try container.decode(SealedResetToken.self, forKey: .sealedToken),
                expiresAt: try Self.decodeTime(from: container, forKey: .expiresAt)
            )
        case "passwordChanged": .passwordChanged
        case "userIdChanged":
            .userIdChanged(previous: try container.decode(String.self, forKey: .previous), new: try container.decode(String.self, forKey: .new))
        case "sessionsRevoked": .sessionsRevoked
        case "emailVerified": .emailVerified
        case "factorAdded":
            .factorAdded(factorId: try container.decode(String.self, forKey: .factorId), factorType: try container.decode(String.self, forKey: .factorType))
        case "factorRemoved":
            .factorRemoved(
                factorId: try container.decode(String.self, forKey: .factorId),
                factorType: try container.decode(String.self, forKey: .factorType),
                remaining: try container.decode(Int.self, forKey: .remaining)
            )
        case "recoveryCodeUsed": .recoveryCodeUsed(remaining: try container.decode(Int.self, forKey: .remaining))
        case "identityLinked":
            .identityLinked(identityId: try container.decode(String.self, forKey: .identityId), provider: try container.decode(String.self, forKey: .provider))
        case "identityUnlinked":
            .identityUnlinked(identityId: try container.decode(String.self, forKey: .identityId), provider: try container.decode(String.self, forKey: .provider))
        case "mailRequested":
            .mailRequested(MailRequest(
                message: try container.decode(MailRequest.Message.self, forKey: .message),
                to: try container.decode(String.self, forKey: .to),
                sealedToken: try container.decodeIfPresent(SealedResetToken.self, forKey: .sealedToken),
                sealedCode: try container.decodeIfPresent(SealedResetToken.self, forKey: .sealedCode),
                expiresAt: try container.contains(.expiresAt) ? Self.decodeTime(from: container, forKey: .expiresAt) : nil,
                values: try container.decodeIfPresent([String: String].self, forKey: .values) ?? [:]
            ))
        default:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "Unknown event type \"\(type)\".")
        }
        self.init(
            id: try container.decode(UUID.self, forKey: .id),
            time: try Self.decodeTime(from: container, forKey: .time),
            accountId: try container.decode(String.self, forKey: .accountId),
            kind: kind
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(kind.name, forKey: .type)
        try container.encode(Self.timestamp(time), forKey: .time)
        try container.encode(accountId, forKey: .accountId)
        switch kind {
        case let .detailsChanged(keys):
            try container.encode(keys, forKey: .keys)
        case let .passwordResetRequested(userId, token, expiresAt):
            try container.encode(userId, forKey: .userId)
            try container.encode(token, forKey: .sealedToken)
            try container.encode(Self.timestamp(expiresAt), forKey: .expiresAt)
        case let .userIdChanged(previous, new):
            try container.encode(previous, forKey: .previous)
            try container.encode(new, forKey: .new)
        case let .factorAdded(factorId, factorType):
            try container.encode(factorId, forKey: .factorId)
            try container.encode(factorType, forKey: .factorType)
        case let .factorRemoved(factorId, factorType, remaining):
            try container.encode(factorId, forKey: .factorId)
            try container.encode(factorType, forKey: .factorType)
            try container.encode(remaining, forKey: .remaining)
        case let .recoveryCodeUsed(remaining):
            try container.encode(remaining, forKey: .remaining)
        case let .identityLinked(identityId, provider), let .identityUnlinked(identityId, provider):
            try container.encode(identityId, forKey: .identityId)
            try container.encode(provider, forKey: .provider)
        case let .mailRequested(request):
            try container.encode(request.message, forKey: .message)
            try container.encode(request.to, forKey: .to)
            try container.encodeIfPresent(request.sealedToken, forKey: .sealedToken)
            try container.encodeIfPresent(request.sealedCode, forKey: .sealedCode)
            try container.encodeIfPresent(request.expiresAt.map(Self.timestamp), forKey: .expiresAt)
            if !request.values.isEmpty {
                try container.encode(request.values, forKey: .values)
            }
        case .associatedAccount, .disassociatingAccount, .deletingAccount, .passwordChanged, .sessionsRevoked, .emailVerified, .accountDisabled,
             .accountEnabled:
            break
        }
    }

    /// The identifiers whose values differ between two versions of an account's details (set, changed or removed),
    /// sorted: what a `detailsChanged` carries.
    public static func changedKeys(previous: AccountDetails, new: AccountDetails) -> [String] {
        let before = previous.storedValues, after = new.storedValues
        return Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }.sorted()
    }

    /// Encoded by hand (``Timestamp``) so the wire form does not depend on the encoder's date strategy, and from whole
    /// milliseconds so that a decoded time equals the encoded one exactly.
    static func timestamp(_ date: Date) -> String {
        Timestamp(date).description
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Timestamp(date).milliseconds
    }

    static func date(milliseconds: Int64) -> Date {
        Timestamp(milliseconds: milliseconds).date
    }

    private static func decodeTime(from container: KeyedDecodingContainer<CodingKeys>, forKey key: CodingKeys) throws -> Date {
        guard let timestamp = Timestamp(iso8601: try container.decode(String.self, forKey: key)) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "Expected an ISO 8601 timestamp.")
        }
        return timestamp.date
    }
}

extension AccountEvent: CustomStringConvertible {
    /// The reset token is shown sealed, so events can be logged.
    public var description: String {
        let payload: String = switch kind {
        case let .detailsChanged(keys): "keys: \(keys)"
        case let .passwordResetRequested(userId, _, expiresAt): "userId: \(userId), token: <sealed>, expiresAt: \(Self.timestamp(expiresAt))"
        case let .userIdChanged(previous, new): "previous: \(previous), new: \(new)"
        case let .factorAdded(factorId, factorType): "factorId: \(factorId), factorType: \(factorType)"
        case let .factorRemoved(factorId, factorType, remaining): "factorId: \(factorId), factorType: \(factorType), remaining: \(remaining)"
        case let .recoveryCodeUsed(remaining): "remaining: \(remaining)"
        case let .identityLinked(identityId, provider), let .identityUnlinked(identityId, provider): "identityId: \(identityId), provider: \(provider)"
        case let .mailRequested(request): "message: \(request.message), to: \(request.to)\(request.sealedToken == nil ? "" : ", token: <sealed>")"
        case .associatedAccount, .disassociatingAccount, .deletingAccount, .passwordChanged, .sessionsRevoked, .emailVerified, .accountDisabled,
             .accountEnabled: ""
        }
        return "AccountEvent(\(kind.name), id: \(id), accountId: \(accountId), time: \(Self.timestamp(time))\(payload.isEmpty ? "" : ", " + payload))"
    }
}

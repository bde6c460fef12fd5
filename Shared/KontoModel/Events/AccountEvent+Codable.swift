import Foundation

extension AccountEvent: Codable {
    private enum CodingKeys: String, CodingKey {
        case id
        case type
        case time
        case accountId
        case details
        case previous
        case new
        case userId
        case sealedToken
        case expiresAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        let kind: Kind = switch type {
        case "associatedAccount": .associatedAccount(try container.decode(AccountDetails.self, forKey: .details))
        case "detailsChanged":
            .detailsChanged(
                previous: try container.decode(AccountDetails.self, forKey: .previous),
                new: try container.decode(AccountDetails.self, forKey: .new)
            )
        case "disassociatingAccount": .disassociatingAccount(try container.decode(AccountDetails.self, forKey: .details))
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
        case let .associatedAccount(details), let .disassociatingAccount(details):
            try container.encode(details, forKey: .details)
        case let .detailsChanged(previous, new):
            try container.encode(previous, forKey: .previous)
            try container.encode(new, forKey: .new)
        case let .passwordResetRequested(userId, token, expiresAt):
            try container.encode(userId, forKey: .userId)
            try container.encode(token, forKey: .sealedToken)
            try container.encode(Self.timestamp(expiresAt), forKey: .expiresAt)
        case let .userIdChanged(previous, new):
            try container.encode(previous, forKey: .previous)
            try container.encode(new, forKey: .new)
        case .deletingAccount, .passwordChanged, .sessionsRevoked:
            break
        }
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
    /// Details are shown without secrets and the reset token is redacted, so events can be logged.
    public var description: String {
        let payload: String = switch kind {
        case let .associatedAccount(details), let .disassociatingAccount(details): "\(details)"
        case let .detailsChanged(previous, new): "previous: \(previous), new: \(new)"
        case let .passwordResetRequested(userId, _, expiresAt): "userId: \(userId), token: <sealed>, expiresAt: \(Self.timestamp(expiresAt))"
        case let .userIdChanged(previous, new): "previous: \(previous), new: \(new)"
        case .deletingAccount, .passwordChanged, .sessionsRevoked: ""
        }
        return "AccountEvent(\(kind.name), id: \(id), accountId: \(accountId), time: \(Self.timestamp(time))\(payload.isEmpty ? "" : ", " + payload))"
    }
}

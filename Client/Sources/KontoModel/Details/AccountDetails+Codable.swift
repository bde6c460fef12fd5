import Foundation

extension CodingUserInfoKey {
    /// Set to `true` in an encoder's `userInfo` to include secret values (the password) in
    /// ``AccountDetails`` encodings; only for transfers between services, never for clients.
    public static let accountDetailsIncludeSecrets = CodingUserInfoKey(rawValue: "konto.accountDetails.includeSecrets")!
}

/// One flat JSON object `{identifier: value}`.
extension AccountDetails: Codable {
    private struct IdentifierKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }

        init(stringValue: String) {
            self.stringValue = stringValue
        }

        init?(intValue: Int) {
            nil
        }
    }

    /// Decodes the values as they come, without checking them against a schema.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: IdentifierKey.self)
        var values: [String: AccountValue] = [:]
        for key in container.allKeys {
            values[key.stringValue] = try container.decode(AccountValue.self, forKey: key)
        }
        self.init(values: values)
    }

    /// Encodes every value except secrets, unless the encoder asks for them
    /// (``Foundation/CodingUserInfoKey/accountDetailsIncludeSecrets``).
    public func encode(to encoder: any Encoder) throws {
        let includeSecrets = encoder.userInfo[.accountDetailsIncludeSecrets] as? Bool == true
        var container = encoder.container(keyedBy: IdentifierKey.self)
        for (identifier, value) in includeSecrets ? storedValues : publicValues {
            try container.encode(value, forKey: IdentifierKey(stringValue: identifier))
        }
    }

    /// The JSON object, with sorted keys; secrets only when asked for.
    public func encoded(includingSecrets: Bool = false) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.userInfo[.accountDetailsIncludeSecrets] = includingSecrets
        return try encoder.encode(self)
    }
}

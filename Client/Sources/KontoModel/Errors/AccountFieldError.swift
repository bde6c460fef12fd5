/// Why one account value was refused.
public struct AccountFieldError: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A stable per-field code such as `invalidType` or `rule.nonEmpty`.
    public struct Code: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// The value has the wrong JSON type, an unknown enum case or a malformed date.
        public static let invalidType = Code(rawValue: "invalidType")
        /// The key is not in the schema and the configuration rejects unknown keys.
        public static let unknownKey = Code(rawValue: "unknownKey")
        /// The key is declared, but the storage that received it does not hold it (``SupportedKeys/exactly(_:)``).
        public static let unsupportedKey = Code(rawValue: "unsupportedKey")
        /// A required key has no value.
        public static let missingAccountValue = Code(rawValue: "missingAccountValue")
        /// A modification changes or removes `accountId`.
        public static let accountIdChanged = Code(rawValue: "accountIdChanged")
        /// A modification changes a key declared `mutable: false` (re-sending its current value is allowed).
        public static let mutatingNonMutableAccountKey = Code(rawValue: "mutatingNonMutableAccountKey")
        /// A modification removes `userId`.
        public static let userIdNotRemovable = Code(rawValue: "userIdNotRemovable")
        /// The same key is both set and removed in one modification.
        public static let conflictingModification = Code(rawValue: "conflictingModification")
        /// A password on the list of the most common ones (Identity's, ASVS 6.2.4).
        public static let commonPassword = Code(rawValue: "commonPassword")
        /// The key is written by the deployment's services only (``AccountKeyWriter/server``), not by its holder.
        public static let serverOwnedKey = Code(rawValue: "serverOwnedKey")
        /// A passkey's registration did not verify (the message says why: WebAuthn's checks).
        public static let passkeyRefused = Code(rawValue: "passkeyRefused")

        /// The value violates the named validation rule.
        public static func rule(_ name: String) -> Code {
            Code(rawValue: "rule.\(name)")
        }

        /// Every fixed field code, the services' included. One style: lowerCamelCase, naming what is wrong with the
        /// one value (where an account error says the same of the whole request, the same words: `missingAccountValue`
        /// beside `account.missingAccountValue`); a deployment's rules alone are namespaced, `rule.<name>`, since
        /// their names are the deployment's. docs/API.md lists them ("Field errors"); a test holds the two together.
        public static let all: [Code] = [
            .invalidType, .unknownKey, .unsupportedKey, .missingAccountValue, .accountIdChanged, .mutatingNonMutableAccountKey,
            .userIdNotRemovable, .conflictingModification, .commonPassword, .serverOwnedKey, .passkeyRefused,
            .credentialNotAccepted, .unsupportedCharacter, .valueTooLarge,
        ]
    }

    /// What a required key without a value is told (the web console's forms say the same).
    public static let missingValueMessage = "This field is required."

    /// The key identifier.
    public let key: String
    public let code: Code
    public let message: String

    public init(key: String, code: Code, message: String) {
        self.key = key
        self.code = code
        self.message = message
    }

    public var description: String {
        "\(key): \(code): \(message)"
    }
}

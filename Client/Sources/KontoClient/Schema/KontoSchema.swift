import KontoModel

/// `GET /v1/schema`: the deployment's configured keys in order, enough to build forms.
public struct KontoSchema: Codable, Sendable, Hashable {
    public struct Key: Codable, Sendable, Hashable {
        public var identifier: String
        public var name: String
        public var category: AccountKeyCategory
        public var valueType: AccountValueType
        public var requirement: AccountKeyRequirement
        public var rules: [ValidationRule]
        public var isSecret: Bool
        /// Who may write the value: a `server` key is read-only to the account holder. Absent from an older
        /// gateway's schema, where every key was the holder's.
        public var writableBy: AccountKeyWriter?

        /// Whether the account holder may set or remove it.
        public var isUserWritable: Bool { writableBy != .server }
    }

    public var userIdType: UserIdType
    public var keys: [Key]
}

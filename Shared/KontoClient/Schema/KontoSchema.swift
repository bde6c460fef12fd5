import KontoModel

/// `GET /v1/schema`: the deployment's configured keys in order, enough to build forms.
public struct KontoSchema: Codable, Sendable, Equatable {
    public struct Key: Codable, Sendable, Equatable {
        public var identifier: String
        public var name: String
        public var category: AccountKeyCategory
        public var valueType: AccountValueType
        public var requirement: AccountKeyRequirement
        public var rules: [ValidationRule]
        public var isSecret: Bool
    }

    public var userIdType: UserIdType
    public var keys: [Key]
}

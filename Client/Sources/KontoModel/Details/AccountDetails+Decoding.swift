import Foundation

extension AccountDetails {
    /// Decodes a JSON object of account values and checks each against the schema.
    ///
    /// Every bad value is reported (one field error per key, `account.validationFailed`), not just the first;
    /// unknown keys are refused or kept as `unknownKeys` says. Secret keys are marked so they stay out of encodings.
    public static func decode(
        json: Data,
        schema: AccountKeySchema,
        unknownKeys: UnknownKeyPolicy = .reject,
        userIdType: UserIdType = .emailAddress
    ) throws(AccountError) -> AccountDetails {
        let values: [String: AccountValue]
        do {
            values = try JSONDecoder().decode([String: AccountValue].self, from: json)
        } catch {
            throw AccountError(code: .validationFailed, message: "Account details must be a JSON object.")
        }
        return try AccountDetails(checking: values, schema: schema, unknownKeys: unknownKeys, userIdType: userIdType)
    }

    /// Checks already parsed values against the schema, reporting every bad value.
    public init(
        checking values: [String: AccountValue],
        schema: AccountKeySchema,
        unknownKeys: UnknownKeyPolicy = .reject,
        userIdType: UserIdType = .emailAddress
    ) throws(AccountError) {
        let errors = schema.fieldErrors(in: values, unknownKeys: unknownKeys)
        guard errors.isEmpty else {
            throw AccountError(code: .validationFailed, fields: errors)
        }
        self.init(values: values, userIdType: userIdType)
        for descriptor in schema.descriptors where descriptor.isSecret {
            markSecret(descriptor.identifier)
        }
    }
}

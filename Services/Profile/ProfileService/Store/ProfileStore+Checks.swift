import KontoContracts
import KontoModel

extension ProfileStore {
    /// Secret keys (the password) are credentials, which only Identity holds.
    func isCredential(_ identifier: String) -> Bool {
        configuration.schema[identifier]?.isSecret == true
    }

    /// The required keys this service holds: credentials-category keys are Identity's to require.
    var requiredIdentifiers: [String] {
        configuration.requiredIdentifiers.filter { configuration.schema[$0]?.category != .credentials }
    }

    /// PostgreSQL `text` cannot hold NUL; an empty identifier is no identifier.
    static func isStorableAccountId(_ accountId: String) -> Bool {
        !accountId.isEmpty && !accountId.unicodeScalars.contains("\0")
    }

    // MARK: Create

    /// The values to store for a new account (without `accountId`), or every problem at once.
    func checkedCreation(accountId: String, details: AccountDetails) throws(ServiceError) -> [String: AccountValue] {
        var values = details.storedValues
        var fields: [AccountFieldError] = []
        if !Self.isStorableAccountId(accountId) {
            fields.append(AccountFieldError(key: AccountIdKey.identifier, code: .invalidType, message: "Invalid value: the account identifier must be non-empty text without NUL characters."))
        }
        if let given = values.removeValue(forKey: AccountIdKey.identifier), given != .string(accountId) {
            fields.append(AccountFieldError(key: AccountIdKey.identifier, code: .accountIdChanged, message: "The account identifier cannot be changed."))
        }
        let credentials = values.keys.filter(isCredential)
        fields += credentials.map(Self.credentialError)
        for identifier in credentials {
            values[identifier] = nil
        }
        fields += configuration.unsupportedKeyErrors(in: values.keys)
        fields += Self.characterErrors(in: values)

        var code = AccountError.Code.validationFailed
        do {
            try configuration.validate(AccountDetails(values: values), requiring: requiredIdentifiers)
        } catch {
            code = fields.isEmpty ? error.code : .validationFailed
            fields += error.fields
        }
        if fields.contains(where: { $0.code == .accountIdChanged }) {
            code = .accountIdChanged
        }
        guard fields.isEmpty else {
            throw ServiceError(AccountError(code: code, fields: Self.sorted(fields)))
        }
        try checkLimits(values, checkingValuesOf: values.keys)
        return values
    }

    // MARK: Modify

    /// Problems visible from the request alone, and the modification with credentials taken out (they are reported
    /// here, so ``AccountConfiguration/apply(_:to:)`` does not report them again as rules or missing values).
    func checkedModifications(_ modifications: AccountModifications) -> (errors: [AccountFieldError], applicable: AccountModifications) {
        var applicable = modifications
        let setValues = modifications.set.storedValues
        let credentials = Set(setValues.keys.filter(isCredential)).union(modifications.remove.filter(isCredential))
        for identifier in credentials {
            applicable.set[identifier: identifier] = nil
            applicable.remove.remove(identifier)
        }
        var errors = credentials.sorted().map(Self.credentialError)
        errors += configuration.unsupportedKeyErrors(in: applicable.set.storedValues.keys)
        errors += Self.characterErrors(in: applicable.set.storedValues)
        return (errors, applicable)
    }

    /// The values after applying the modification to `current`, without `accountId`, or every problem at once.
    func modifiedValues(current: AccountDetails, applying modifications: AccountModifications, requestErrors: [AccountFieldError]) throws(ServiceError) -> [String: AccountValue] {
        var fields = requestErrors
        var code = AccountError.Code.validationFailed
        var updated = current
        do {
            updated = try configuration.apply(modifications, to: current)
        } catch {
            code = error.code
            fields += error.fields
        }
        guard fields.isEmpty else {
            throw ServiceError(AccountError(code: code, fields: Self.sorted(fields)))
        }
        var values = updated.storedValues
        values[AccountIdKey.identifier] = nil
        // Values already stored passed the limits when they were set; only the new ones are measured one by one.
        try checkLimits(values, checkingValuesOf: modifications.set.storedValues.keys)
        return values
    }

    // MARK: Limits

    /// Measures the JSON encoding of the given keys' values and of the whole account.
    func checkLimits(_ values: [String: AccountValue], checkingValuesOf identifiers: some Sequence<String>) throws(ServiceError) {
        let limits = options.limits
        var oversized: [AccountFieldError] = []
        var unencodable: [AccountFieldError] = []
        for identifier in Set(identifiers).sorted() {
            guard let value = values[identifier] else { continue }
            guard let size = try? ProfileDocument.encode(value).count else {
                unencodable.append(AccountFieldError(key: identifier, code: .invalidType, message: "Invalid value: numbers must be finite."))
                continue
            }
            if size > limits.maximumValueBytes {
                oversized.append(AccountFieldError(
                    key: identifier,
                    code: .valueTooLarge,
                    message: "This value is larger than the limit of \(limits.maximumValueBytes) bytes."
                ))
            }
        }
        if !unencodable.isEmpty {
            throw ServiceError(AccountError(code: .validationFailed, fields: unencodable))
        }
        if !oversized.isEmpty {
            let keys = oversized.map(\.key).joined(separator: ", ")
            throw ServiceError(
                code: .profileValueTooLarge,
                message: "Values of \(keys) are larger than the limit of \(limits.maximumValueBytes) bytes per value.",
                fields: oversized
            )
        }
        guard let size = try? ProfileDocument.encode(values).count else {
            throw ServiceError(AccountError(code: .validationFailed))
        }
        if size > limits.maximumAccountBytes {
            throw ServiceError(
                code: .profileAccountTooLarge,
                message: "The account's details would take \(size) bytes, over the limit of \(limits.maximumAccountBytes) bytes per account."
            )
        }
    }

    // MARK: Field errors

    static func credentialError(_ identifier: String) -> AccountFieldError {
        AccountFieldError(key: identifier, code: .credentialNotAccepted, message: "Credentials are not stored with the profile.")
    }

    /// PostgreSQL's `jsonb` refuses NUL (`\u0000`) anywhere; refusing it here keeps every storage alike.
    static func characterErrors(in values: [String: AccountValue]) -> [AccountFieldError] {
        values.keys.sorted().compactMap { identifier in
            guard identifier.unicodeScalars.contains("\0") || containsNUL(values[identifier] ?? .null) else { return nil }
            return AccountFieldError(key: identifier, code: .unsupportedCharacter, message: "Text must not contain NUL characters.")
        }
    }

    private static func containsNUL(_ value: AccountValue) -> Bool {
        switch value {
        case let .string(string): string.unicodeScalars.contains("\0")
        case let .array(elements): elements.contains(where: containsNUL)
        case let .object(members): members.contains { $0.key.unicodeScalars.contains("\0") || containsNUL($0.value) }
        case .bool, .integer, .double, .null: false
        }
    }

    static func sorted(_ fields: [AccountFieldError]) -> [AccountFieldError] {
        fields.sorted { ($0.key, $0.code.rawValue) < ($1.key, $1.code.rawValue) }
    }
}

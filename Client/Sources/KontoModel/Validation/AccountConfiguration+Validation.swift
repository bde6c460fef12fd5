import Foundation

extension AccountConfiguration {
    /// Checks details against the schema, the rules and the required keys; throws every violation at once.
    ///
    /// - Parameter required: the identifiers that must be present; by default every `requires` key.
    ///   A storage provider that never holds credentials passes the required keys it holds.
    public func validate(_ details: AccountDetails, requiring required: [String]? = nil) throws(AccountError) {
        var errors = valueErrors(in: details.storedValues)
        for identifier in required ?? requiredIdentifiers where !details.contains(identifier) {
            errors.append(Self.missingValueError(identifier))
        }
        guard errors.isEmpty else {
            let onlyMissing = errors.allSatisfy { $0.code == .missingAccountValue }
            throw AccountError(code: onlyMissing ? .missingAccountValue : .validationFailed, fields: errors)
        }
    }

    /// Type, unknown-key and rule errors for the given values, sorted by key.
    public func valueErrors(in values: [String: AccountValue]) -> [AccountFieldError] {
        values.keys.sorted().flatMap { identifier -> [AccountFieldError] in
            let value = values[identifier] ?? .null
            guard schema.contains(identifier) else {
                return unknownKeys == .reject ? [AccountKeySchema.unknownKeyError(identifier)] : []
            }
            if let typeError = schema.typeError(identifier: identifier, value: value) {
                return [typeError]
            }
            return ruleErrors(identifier: identifier, value: value)
        }
    }

    /// One error per violated rule; a string list violates a rule when any element does.
    private func ruleErrors(identifier: String, value: AccountValue) -> [AccountFieldError] {
        let strings: [String] = switch value {
        case let .string(string): [string]
        case let .array(elements): elements.compactMap(\.stringValue)
        default: []
        }
        var errors = rules(for: identifier)
            .filter { rule in strings.contains { !rule.isSatisfied(by: $0) } }
            .map { AccountFieldError(key: identifier, code: .rule($0.name), message: $0.message) }
        // Addresses Konto mails to (an email userId, the email detail) must be ones mail can reach, whatever rules the
        // deployment configured: one address, no line breaks or commas (EmailAddressSyntax).
        let mailed = (identifier == UserIdKey.identifier && userIdType == .emailAddress) || identifier == EmailKey.identifier
        if mailed, errors.isEmpty, strings.contains(where: { !EmailAddressSyntax.isDeliverable($0.trimmingCharacters(in: .whitespaces)) }) {
            errors.append(AccountFieldError(key: identifier, code: .rule(EmailAddressSyntax.ruleName), message: EmailAddressSyntax.message))
        }
        return errors
    }

    static func missingValueError(_ identifier: String) -> AccountFieldError {
        AccountFieldError(key: identifier, code: .missingAccountValue, message: AccountFieldError.missingValueMessage)
    }
}

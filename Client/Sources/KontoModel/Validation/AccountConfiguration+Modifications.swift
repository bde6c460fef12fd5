extension AccountConfiguration {
    /// Checks a modification against the configuration and the current details and returns the new details.
    ///
    /// Atomic: either the whole modification is valid, or an ``AccountError`` lists every problem. Refused are
    /// changing or removing `accountId` (`accountIdChanged`), changing a non-mutable key
    /// (`mutatingNonMutableAccountKeys`; setting its current value again is allowed), removing `userId`
    /// (`userIdNotRemovable`), removing a `requires` key (`missingAccountValue`), setting and removing one key,
    /// and values that fail type or rule checks. With several kinds of problems, the error's code is the first of
    /// accountIdChanged, userIdNotRemovable, mutatingNonMutableAccountKeys, missingAccountValue, validationFailed.
    @discardableResult
    public func apply(_ modifications: AccountModifications, to current: AccountDetails) throws(AccountError) -> AccountDetails {
        var errors: [AccountFieldError] = []
        let setValues = modifications.set.storedValues

        for identifier in modifications.remove.sorted() where setValues[identifier] != nil {
            errors.append(AccountFieldError(key: identifier, code: .conflictingModification, message: "A key cannot be set and removed at once."))
        }
        for identifier in setValues.keys.sorted() where setValues[identifier] != current[identifier: identifier] {
            if let error = mutabilityError(identifier) {
                errors.append(error)
            }
        }
        for identifier in modifications.remove.sorted() {
            if identifier == UserIdKey.identifier {
                errors.append(AccountFieldError(key: identifier, code: .userIdNotRemovable, message: "The user identifier cannot be removed."))
            } else if let error = mutabilityError(identifier), current.contains(identifier) || identifier == AccountIdKey.identifier {
                errors.append(error)
            } else if requirement(for: identifier) == .requires {
                errors.append(Self.missingValueError(identifier))
            } else if !schema.contains(identifier), unknownKeys == .reject {
                // As for setting one: a key the deployment does not know is a mistake, not a no-op.
                errors.append(AccountKeySchema.unknownKeyError(identifier))
            }
        }
        errors += valueErrors(in: setValues)

        guard errors.isEmpty else {
            throw AccountError(code: Self.leadingCode(of: errors), fields: errors)
        }
        var updated = current
        updated.merge(modifications.set)
        for identifier in modifications.remove {
            updated[identifier: identifier] = nil
        }
        return updated
    }

    private func mutabilityError(_ identifier: String) -> AccountFieldError? {
        if identifier == AccountIdKey.identifier {
            return AccountFieldError(key: identifier, code: .accountIdChanged, message: "The account identifier cannot be changed.")
        }
        if let descriptor = schema[identifier], !descriptor.options.contains(.mutable) {
            return AccountFieldError(key: identifier, code: .mutatingNonMutableAccountKey, message: "This value cannot be changed.")
        }
        return nil
    }

    private static func leadingCode(of errors: [AccountFieldError]) -> AccountError.Code {
        let precedence: [(AccountFieldError.Code, AccountError.Code)] = [
            (.accountIdChanged, .accountIdChanged),
            (.userIdNotRemovable, .userIdNotRemovable),
            (.mutatingNonMutableAccountKey, .mutatingNonMutableAccountKeys),
            (.missingAccountValue, .missingAccountValue),
        ]
        return precedence.first { entry in errors.contains { $0.code == entry.0 } }?.1 ?? .validationFailed
    }
}

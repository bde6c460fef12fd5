import KontoModel

extension KontoSchema {
    /// A problem with `KEY=VALUE` text, before anything is sent.
    public struct AssignmentError: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// The key of this schema with `identifier`, if configured.
    public func key(_ identifier: String) -> Key? {
        keys.first { $0.identifier == identifier }
    }

    /// Details from `KEY=VALUE` texts (the `konto account set` arguments), each value read as its key's type:
    /// strings, dates (`yyyy-MM-dd`) and enumeration cases as written; `true`/`false`; numbers; a string list from
    /// repeated assignments (`phoneNumbers=+41… phoneNumbers=+49…`); a name as `name=Given Family` or by part
    /// (`name.givenName=Ada`, the other parts kept from `current`, since a modification replaces the whole name).
    /// Whether a value is valid is the gateway's to say; only its shape is checked here.
    public func details(fromAssignments assignments: [String], current: AccountDetails? = nil) throws(AssignmentError) -> AccountDetails {
        var values: [String: AccountValue] = [:]
        for assignment in assignments {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw AssignmentError(description: "'\(assignment)' is not KEY=VALUE")
            }
            let name = String(assignment[..<equals])
            let text = String(assignment[assignment.index(after: equals)...])
            let (identifier, part) = Self.split(name)
            guard let key = key(identifier) else {
                throw AssignmentError(description: "unknown key '\(identifier)' (`konto schema` lists the keys)")
            }
            guard !Self.managedElsewhere(key) else {
                throw AssignmentError(description: "'\(identifier)' is not changed with `account set` (`konto password`, `konto user-id`)")
            }
            if let part {
                guard key.valueType == .personName, PersonName.componentNames.contains(part) else {
                    throw AssignmentError(description: "'\(name)': only a name has parts (\(PersonName.componentNames.joined(separator: ", ")))")
                }
                var components: [String: AccountValue] = [:]
                if case let .object(members)? = values[identifier] ?? current?[identifier: identifier] { components = members }
                components[part] = .string(text)
                values[identifier] = .object(components)
                continue
            }
            switch key.valueType {
            case .string, .date, .enumeration:
                values[identifier] = .string(text)
            case .bool:
                switch text.lowercased() {
                case "true", "yes": values[identifier] = .bool(true)
                case "false", "no": values[identifier] = .bool(false)
                default: throw AssignmentError(description: "'\(identifier)' is true or false, not '\(text)'")
                }
            case .integer:
                guard let number = Int64(text) else { throw AssignmentError(description: "'\(identifier)' is a whole number, not '\(text)'") }
                values[identifier] = .integer(number)
            case .double:
                guard let number = Double(text), number.isFinite else { throw AssignmentError(description: "'\(identifier)' is a number, not '\(text)'") }
                values[identifier] = .double(number)
            case .stringList:
                var list: [AccountValue] = []
                if case let .array(items)? = values[identifier] { list = items }
                list.append(.string(text))
                values[identifier] = .array(list)
            case .personName:
                let words = text.split(separator: " ", omittingEmptySubsequences: true)
                var components: [String: AccountValue] = [:]
                if let given = words.first { components["givenName"] = .string(String(given)) }
                if words.count > 1 { components["familyName"] = .string(words.dropFirst().joined(separator: " ")) }
                values[identifier] = .object(components)
            }
        }
        return AccountDetails(values: values, userIdType: userIdType)
    }

    /// Whether any assignment sets a part of a value (and so needs the current value to keep the other parts).
    public static func setsParts(_ assignments: [String]) -> Bool {
        assignments.contains { $0.split(separator: "=", maxSplits: 1).first?.contains(".") == true }
    }

    /// Keys for `konto account remove`: each must be configured and removable by a modification.
    public func removableKeys(_ identifiers: [String]) throws(AssignmentError) -> Set<String> {
        for identifier in identifiers {
            guard let key = key(identifier) else {
                throw AssignmentError(description: "unknown key '\(identifier)' (`konto schema` lists the keys)")
            }
            guard !Self.managedElsewhere(key), key.requirement != .requires else {
                throw AssignmentError(description: "'\(identifier)' cannot be removed")
            }
        }
        return Set(identifiers)
    }

    /// The credentials and the account id: changed by their own operations, never by a modification.
    private static func managedElsewhere(_ key: Key) -> Bool {
        key.isSecret || key.category == .credentials || key.identifier == "accountId"
    }

    private static func split(_ name: String) -> (String, String?) {
        guard let dot = name.firstIndex(of: ".") else { return (name, nil) }
        return (String(name[..<dot]), String(name[name.index(after: dot)...]))
    }
}

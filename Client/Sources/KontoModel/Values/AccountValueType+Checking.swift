extension AccountValueType {
    /// Why `value` does not fit this type, or `nil` when it does.
    ///
    /// The message names what was expected and never repeats the value, which may be secret.
    public func mismatch(for value: AccountValue) -> String? {
        switch (self, value) {
        case (.string, .string), (.bool, .bool), (.integer, .integer), (.double, .double), (.double, .integer):
            return nil
        case let (.date, .string(string)):
            return CalendarDate(string) == nil ? "expected a calendar date \"yyyy-MM-dd\"" : nil
        case let (.enumeration(cases), .string(string)):
            return cases.contains(string) ? nil : "expected one of \(cases.joined(separator: ", "))"
        case let (.stringList, .array(elements)):
            return elements.allSatisfy { $0.stringValue != nil } ? nil : "expected a list of strings"
        case let (.personName, .object(fields)):
            let known = Set(PersonName.componentNames)
            let valid = fields.allSatisfy { known.contains($0.key) && ($0.value.stringValue != nil || $0.value == .null) }
            return valid ? nil : "expected a name object with string fields \(PersonName.componentNames.joined(separator: ", "))"
        default:
            return "expected \(expectation), got \(value.kindName)"
        }
    }

    private var expectation: String {
        switch self {
        case .string: "a string"
        case .bool: "a bool"
        case .integer: "an integer"
        case .double: "a number"
        case .date: "a calendar date \"yyyy-MM-dd\""
        case .enumeration: "a string"
        case .stringList: "a list of strings"
        case .personName: "a name object"
        }
    }
}

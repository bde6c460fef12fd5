import GatewayService
import Foundation
import KontoModel

/// The console's view of the configured keys (the same configuration `GET /v1/schema` publishes): which keys each
/// form asks for, grouped by category in the configured order, how a submitted form becomes account values, and how
/// stored values are shown. A key added to the accounts file appears here with no code change.
struct ConsoleSchema: Sendable {
    struct Category: Sendable {
        var id: String
        var title: String
        var fields: [ConsoleField]
        /// Drawn as a fieldset with its title; not when its one field is named like it (a name in the category Name
        /// would read "Name / Name (required)"): the field's own legend then says it once.
        /// (Stored: the templates read stored properties only.)
        var wrapped: Bool

        init(id: String, title: String, fields: [ConsoleField]) {
            self.id = id
            self.title = title
            self.wrapped = !(fields.count == 1 && fields[0].label.lowercased() == title.lowercased())
            // Beside others (a name and a handle in Name), a field named like its category would read "Name / Name":
            // it is the full one of the category's kind.
            self.fields = !wrapped ? fields : fields.map { field in
                var field = field
                if field.label.lowercased() == title.lowercased() { field.label = "Full " + field.label.lowercased() }
                return field
            }
        }
    }

    struct ShownValue: Sendable {
        var id: String
        var label: String
        var text: String
    }

    struct ShownCategory: Sendable {
        var id: String
        var title: String
        var values: [ShownValue]
    }

    let configuration: AccountConfiguration

    /// Keys that are never account details in a form: the account id is Konto's, the credentials have their own pages.
    static let credentialKeys: Set<String> = [AccountIdKey.identifier, UserIdKey.identifier, PasswordKey.identifier]

    /// The sign-up form's keys: `requires` and `collects`, credentials included, none the server writes.
    var signUpKeys: [(AccountKeyDescriptor, AccountKeyRequirement)] {
        described.filter { ($0.1 == .requires || $0.1 == .collects) && $0.0.writableBy == .user }
    }

    /// The edit form's keys: every mutable key the user may write but the credentials and the `manual` ones (the
    /// app's own), `supports` included. The overview shows the others.
    var editKeys: [(AccountKeyDescriptor, AccountKeyRequirement)] {
        described.filter {
            !Self.credentialKeys.contains($0.0.identifier) && $0.1 != .manual && $0.0.options.contains(.mutable) && $0.0.writableBy == .user
        }
    }

    private var described: [(AccountKeyDescriptor, AccountKeyRequirement)] {
        configuration.keys.compactMap { key in
            guard key.identifier != AccountIdKey.identifier, let descriptor = configuration.schema[key.identifier] else { return nil }
            return (descriptor, key.requirement)
        }
    }

    /// `keys` as form fields, grouped by category in the order the categories first appear in the configuration.
    func categories(
        _ keys: [(AccountKeyDescriptor, AccountKeyRequirement)],
        values: [String: AccountValue],
        errors: [String: String]
    ) -> [Category] {
        var order: [AccountKeyCategory] = []
        var grouped: [AccountKeyCategory: [ConsoleField]] = [:]
        for (descriptor, requirement) in keys {
            let field = ConsoleField(
                descriptor: descriptor,
                required: requirement == .requires,
                userIdType: configuration.userIdType,
                value: values[descriptor.identifier],
                error: errors[descriptor.identifier]
            )
            if grouped[descriptor.category] == nil { order.append(descriptor.category) }
            grouped[descriptor.category, default: []].append(field)
        }
        return order.map { Category(id: "category-\($0.rawValue)", title: ConsoleField.title($0.rawValue), fields: grouped[$0] ?? []) }
    }

    /// The values a form holds for `keys`, with the errors of those that are not of their key's type (a number that
    /// is none); empty inputs give no value.
    func values(
        from form: ConsoleForm,
        keys: [(AccountKeyDescriptor, AccountKeyRequirement)]
    ) -> (values: [String: AccountValue], errors: [String: String]) {
        var values: [String: AccountValue] = [:]
        var errors: [String: String] = [:]
        for (descriptor, _) in keys {
            let identifier = descriptor.identifier
            switch descriptor.valueType {
            case .string, .date, .enumeration:
                if let text = form[identifier], !text.isEmpty { values[identifier] = .string(text) }
            case .bool:
                values[identifier] = .bool(form[identifier] == "true")
            case .integer:
                guard let text = form[identifier]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { continue }
                if let integer = Int64(text) {
                    values[identifier] = .integer(integer)
                } else {
                    errors[identifier] = "Enter a whole number."
                    values[identifier] = .string(text)
                }
            case .double:
                guard let text = form[identifier]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { continue }
                if let double = Double(text), double.isFinite {
                    values[identifier] = .double(double)
                } else {
                    errors[identifier] = "Enter a number."
                    values[identifier] = .string(text)
                }
            case .stringList:
                let items = form.list(identifier).filter { !$0.isEmpty }
                if !items.isEmpty { values[identifier] = .array(items.map(AccountValue.string)) }
            case .personName:
                let members = Set(ConsoleField.nameParts.map(\.member))
                let parts = form.parts(identifier).filter { member, value in !value.isEmpty && members.contains(member) }
                if !parts.isEmpty { values[identifier] = .object(parts.mapValues(AccountValue.string)) }
            }
        }
        return (values, errors)
    }

    /// The displayed keys that have a value, by category.
    func shown(_ details: [String: AccountValue]) -> [ShownCategory] {
        var order: [AccountKeyCategory] = []
        var grouped: [AccountKeyCategory: [ShownValue]] = [:]
        for (descriptor, _) in described {
            guard descriptor.options.contains(.display), !descriptor.isSecret, let value = details[descriptor.identifier] else { continue }
            if grouped[descriptor.category] == nil { order.append(descriptor.category) }
            grouped[descriptor.category, default: []].append(
                ShownValue(id: "value-\(descriptor.identifier)", label: label(descriptor), text: Self.shownText(value, type: descriptor.valueType))
            )
        }
        return order.map { ShownCategory(id: "category-\($0.rawValue)", title: ConsoleField.title($0.rawValue), values: grouped[$0] ?? []) }
    }

    /// A key's name as the pages show it: the userId as the login form names it.
    private func label(_ descriptor: AccountKeyDescriptor) -> String {
        descriptor.identifier == UserIdKey.identifier ? ConsoleField.userIdLabel(configuration.userIdType) : ConsoleField.label(descriptor)
    }

    static func shownText(_ value: AccountValue, type: AccountValueType) -> String {
        switch (type, value) {
        case (_, .bool(let bool)): bool ? "Yes" : "No"
        case (.enumeration, .string(let string)): ConsoleField.title(string)
        case (.personName, .object(let members)):
            ConsoleField.nameParts.filter { $0.member != "nickname" }.compactMap { part in
                members[part.member].map(ConsoleField.text)
            }.filter { !$0.isEmpty }.joined(separator: " ")
        default: ConsoleField.text(value)
        }
    }
}

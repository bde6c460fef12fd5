import GatewayService
import KontoModel

/// One input of a console form, built from a configured key (what `GET /v1/schema` publishes), ready for the
/// templates: which control it is, its value as typed or stored, and its error. Every string here reaches the page
/// through Mustache's escaping `{{…}}`.
struct ConsoleField: Sendable {
    struct Option: Sendable {
        var value: String
        var label: String
        var selected: Bool
    }

    struct Item: Sendable {
        var id: String
        var label: String
        var value: String
    }

    struct Part: Sendable {
        var id: String
        var name: String
        var label: String
        var value: String
        var autocomplete: String
    }

    var identifier: String
    var inputId: String
    var errorId: String
    var label: String
    var required: Bool
    var error: String?
    var value = ""
    /// `text`, `email`, `password`, `number` or `date`, for a plain input.
    var inputType: String?
    var step: String?
    var autocomplete: String?
    var checked = false
    var isCheckbox = false
    var isSelect = false
    var options: [Option] = []
    var isList = false
    var items: [Item] = []
    var isName = false
    var parts: [Part] = []
    /// For the page's script: `data-key` names the schema key whose rules apply to the input.
    var ruleKey: String?
    /// A plain `<input>` (Mustache sees stored properties only).
    var isPlain = false

    /// The name's parts in the order SpeziAccount's name editor shows them.
    static let nameParts: [(member: String, label: String, autocomplete: String)] = [
        ("namePrefix", "Prefix", "honorific-prefix"),
        ("givenName", "Given name", "given-name"),
        ("middleName", "Middle name", "additional-name"),
        ("familyName", "Family name", "family-name"),
        ("nameSuffix", "Suffix", "honorific-suffix"),
        ("nickname", "Nickname", "nickname"),
    ]

    /// A field for `descriptor` showing `value` (stored, or as the form held it) and `error`.
    init(descriptor: AccountKeyDescriptor, required: Bool, userIdType: UserIdType, value: AccountValue?, error: String?) {
        let identifier = descriptor.identifier
        self.identifier = identifier
        self.inputId = "field-\(identifier)"
        self.errorId = "error-\(identifier)"
        self.label = Self.label(descriptor)
        self.required = required
        self.error = error
        switch descriptor.valueType {
        case .string:
            ruleKey = identifier
            value.map { self.value = Self.text($0) }
            if descriptor.isSecret {
                inputType = "password"
                autocomplete = "new-password"
                // A password never goes back into a page (``init(name:id:label:type:value:error:autocomplete:ruleKey:required:)``).
                self.value = ""
            } else if identifier == UserIdKey.identifier {
                label = Self.userIdLabel(userIdType)
                inputType = userIdType == .emailAddress ? "email" : "text"
                autocomplete = userIdType == .emailAddress ? "email" : "username"
            } else if identifier == EmailKey.identifier {
                inputType = "email"
                autocomplete = "email"
            } else {
                inputType = "text"
            }
        case .bool:
            isCheckbox = true
            if case .bool(true) = value { checked = true }
        case .integer:
            inputType = "number"
            step = "1"
            value.map { self.value = Self.text($0) }
        case .double:
            inputType = "number"
            step = "any"
            value.map { self.value = Self.text($0) }
        case .date:
            inputType = "date"
            value.map { self.value = Self.text($0) }
            if identifier == DateOfBirthKey.identifier { autocomplete = "bday" }
        case .enumeration(let cases):
            isSelect = true
            let selected = value.map(Self.text) ?? ""
            options = [Option(value: "", label: "—", selected: selected.isEmpty)]
                + cases.map { Option(value: $0, label: Self.title($0), selected: $0 == selected) }
        case .stringList:
            isList = true
            ruleKey = identifier
            var values: [String] = []
            if case .array(let elements)? = value { values = elements.map(Self.text) }
            // One empty input more, so a list grows without the page's script too.
            values.append("")
            items = values.enumerated().map {
                Item(id: "field-\(identifier)-\($0.offset)", label: "\(descriptor.name) \($0.offset + 1)", value: $0.element)
            }
        case .personName:
            isName = true
            var members: [String: AccountValue] = [:]
            if case .object(let object)? = value { members = object }
            // The given and family names, as SpeziAccount's name field asks; the other parts only when they hold one.
            parts = Self.nameParts.filter { ["givenName", "familyName"].contains($0.member) || members[$0.member] != nil }.map { part in
                Part(
                    id: "field-\(identifier)-\(part.member)",
                    name: "\(identifier)[\(part.member)]",
                    label: part.label,
                    value: members[part.member].map(Self.text) ?? "",
                    autocomplete: part.autocomplete
                )
            }
        }
        isPlain = inputType != nil
    }

    /// A plain input of a page's own (a new password, the current one, a user id), not an account key's.
    init(
        name: String,
        id: String? = nil,
        label: String,
        type: String,
        value: String = "",
        error: String? = nil,
        autocomplete: String? = nil,
        ruleKey: String? = nil,
        required: Bool = true
    ) {
        self.identifier = name
        self.inputId = id ?? "field-\(name)"
        self.errorId = "error-\(name)"
        self.label = label
        self.required = required
        self.error = error
        // A password is never written into a page, also not one the form is shown again for: the page's HTML is
        // kept by whatever saves it (a browser's session restore, an extension, a screenshot of the source).
        self.value = type == "password" ? "" : value
        self.autocomplete = autocomplete
        self.ruleKey = ruleKey
        if type == "checkbox" {
            isCheckbox = true
            checked = value == "true"
        } else {
            inputType = type
            isPlain = true
        }
    }

    /// What the pages call the userId, everywhere as the login form does.
    /// A key's name as a label: the built-in keys' in sentence case like every label of the console's own ("Date of
    /// birth", not SpeziAccount's "Date of Birth"); a deployment's own keys as it names them.
    static func label(_ descriptor: AccountKeyDescriptor) -> String {
        guard AccountKeySchema.builtInIdentifiers.contains(descriptor.identifier) else { return descriptor.name }
        let words = descriptor.name.split(separator: " ")
        return ([words.first.map(String.init) ?? ""] + words.dropFirst().map { $0.lowercased() }).joined(separator: " ")
    }

    static func userIdLabel(_ type: UserIdType) -> String {
        type == .emailAddress ? "Email address" : "Username"
    }

    /// A value as an input holds it.
    static func text(_ value: AccountValue) -> String {
        switch value {
        case .string(let string): string
        case .bool(let bool): bool ? "true" : "false"
        case .integer(let integer): String(integer)
        case .double(let double): double == double.rounded() && abs(double) < 1e15 ? String(Int64(double)) : String(double)
        case .array(let elements): elements.map(text).joined(separator: ", ")
        case .object, .null: ""
        }
    }

    /// `contactDetails` → `Contact details`, `nonBinary` → `Non binary`: an enum case or category as shown.
    static func title(_ identifier: String) -> String {
        var words: [String] = []
        var current = ""
        for character in identifier {
            if character.isUppercase, !current.isEmpty {
                words.append(current)
                current = ""
            }
            current.append(character)
        }
        if !current.isEmpty { words.append(current) }
        guard let first = words.first else { return identifier }
        return ([first.prefix(1).uppercased() + first.dropFirst()] + words.dropFirst().map { $0.lowercased() }).joined(separator: " ")
    }
}

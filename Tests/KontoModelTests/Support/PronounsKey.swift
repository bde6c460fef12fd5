import KontoModel

/// An app-defined enum key: its type and cases are inferred from the Swift enum.
enum Pronouns: String, Codable, CaseIterable {
    case sheHer
    case heHim
    case theyThem
}

struct PronounsKey: AccountKey {
    typealias Value = Pronouns
    static let identifier = "pronouns"
    static let name = "Pronouns"
    static let category = AccountKeyCategory.personalDetails
}

extension AccountKeys {
    var pronouns: PronounsKey.Type { PronounsKey.self }
}

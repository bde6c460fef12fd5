import KontoModel

/// A key an app declares without touching the library, as the issue asks.
struct BiographyKey: AccountKey {
    typealias Value = String
    static let identifier = "biography"
    static let name = "Biography"
    static let category = AccountKeyCategory.personalDetails
}

extension AccountKeys {
    var biography: BiographyKey.Type { BiographyKey.self }
}

/// A non-string custom key.
struct ShoeSizeKey: AccountKey {
    typealias Value = Double
    static let identifier = "shoeSize"
    static let name = "Shoe Size"
    static let category = AccountKeyCategory.other
}

extension AccountKeys {
    var shoeSize: ShoeSizeKey.Type { ShoeSizeKey.self }
}

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

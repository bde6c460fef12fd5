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

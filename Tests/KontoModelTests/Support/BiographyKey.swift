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

/// A non-string custom key with an explicit initial value.
struct ShoeSizeKey: AccountKey {
    typealias Value = Double
    static let identifier = "shoeSize"
    static let name = "Shoe Size"
    static let category = AccountKeyCategory.other
}

extension AccountKeys {
    var shoeSize: ShoeSizeKey.Type { ShoeSizeKey.self }
}

import KontoModel

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

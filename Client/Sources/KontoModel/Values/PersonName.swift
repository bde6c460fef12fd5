/// The parts of a person's name.
///
/// Used instead of Foundation's `PersonNameComponents`, whose `Codable` form differs across platforms.
/// Absent parts are omitted from the JSON object.
public struct PersonName: Sendable, Hashable, Codable {
    public var namePrefix: String?
    public var givenName: String?
    public var middleName: String?
    public var familyName: String?
    public var nameSuffix: String?
    public var nickname: String?

    /// The JSON field names, in display order.
    public static let componentNames = ["namePrefix", "givenName", "middleName", "familyName", "nameSuffix", "nickname"]

    public init(
        namePrefix: String? = nil,
        givenName: String? = nil,
        middleName: String? = nil,
        familyName: String? = nil,
        nameSuffix: String? = nil,
        nickname: String? = nil
    ) {
        self.namePrefix = namePrefix
        self.givenName = givenName
        self.middleName = middleName
        self.familyName = familyName
        self.nameSuffix = nameSuffix
        self.nickname = nickname
    }
}

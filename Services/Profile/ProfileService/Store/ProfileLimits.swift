/// Size limits, measured on the JSON encoding (UTF-8 bytes) of a value and of all of an account's values.
public struct ProfileLimits: Sendable, Hashable {
    /// 64 KiB by default.
    public var maximumValueBytes: Int
    /// 1 MiB by default.
    public var maximumAccountBytes: Int

    public init(maximumValueBytes: Int = 64 * 1024, maximumAccountBytes: Int = 1024 * 1024) {
        self.maximumValueBytes = maximumValueBytes
        self.maximumAccountBytes = maximumAccountBytes
    }
}

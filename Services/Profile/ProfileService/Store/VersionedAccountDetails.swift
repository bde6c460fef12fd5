import KontoModel

/// Account details with the version they were read or written at, for optimistic concurrency (`If-Match`).
public struct VersionedAccountDetails: Sendable, Equatable {
    public var details: AccountDetails
    public var version: Int64

    public init(details: AccountDetails, version: Int64) {
        self.details = details
        self.version = version
    }
}

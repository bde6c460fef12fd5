/// What the platform promises about one error code: whether the same request may succeed later, and the HTTP
/// status the Gateway answers with. Listed once, in ``ErrorCatalog``.
public struct ErrorCodeInfo: Sendable, Hashable {
    /// The stable code, e.g. `account.credentialsTaken`.
    public let code: String
    /// Whether the same request may succeed if sent again (later, or to another instance).
    public let isRetryable: Bool
    /// The status of the Gateway's `application/problem+json` answer.
    public let httpStatus: Int

    public init(_ code: String, retryable: Bool = false, http httpStatus: Int) {
        self.code = code
        self.isRetryable = retryable
        self.httpStatus = httpStatus
    }
}

/// The Identity service's contract: credentials and sessions (SpeziAccount's UserIdPasswordAccountService).
///
/// Its methods arrive with the Identity service; what is declared so far is what its parts already raise.
public enum IdentityContract {
    public static let serviceName = "identity"
    /// Raised when a method's request or response changes incompatibly.
    public static let version = 1

    /// Identity's own codes.
    public enum ErrorCode {
        /// Every password-hashing thread is busy and the queue is full (a login flood); retryable.
        public static let busy = "identity.busy"
    }
}

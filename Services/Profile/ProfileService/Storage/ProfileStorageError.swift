import KontoModel

/// Profile's storage errors are the services' one ``StorageError``: `conflict` is an account that has a record already
/// (``ProfileStorage/insert(accountId:values:)``).
public typealias ProfileStorageError = StorageError

extension ProfileStorageError {
    /// `error` as a storage error: itself if it is one, else a call given up on (its deadline passed or its caller
    /// was cancelled), which is `unavailable` and may be retried.
    static func abandoned(_ error: any Error) -> ProfileStorageError {
        error as? ProfileStorageError ?? ProfileStorageError(.unavailable, underlying: error)
    }
}

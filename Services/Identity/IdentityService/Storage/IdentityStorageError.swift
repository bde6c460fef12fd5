import KontoModel

/// Identity's storage errors are the services' one ``StorageError``: `conflict` is a normalized userId another account
/// has, `notFound` an account, session or token that is not there.
public typealias IdentityStorageError = StorageError

import KontoContracts
import KontoModel
import KontoPostgres
import Logging

extension ProfileStore {
    /// Runs one storage call within the operation timeout and maps its failures to ``ServiceError``s.
    func perform<Value: Sendable>(
        _ operation: String,
        logger: Logger,
        _ body: @escaping @Sendable (any ProfileStorage) async throws(ProfileStorageError) -> Value
    ) async throws(ServiceError) -> Value {
        let storage = storage
        do {
            let timeout = options.operationTimeout
            return try await StatementSpan.run(operation, schema: "profile") {
                try await OperationTimeout.run(timeout) {
                    try await body(storage)
                }
            }
        } catch {
            throw mapped(error, operation: operation, logger: logger)
        }
    }

    /// The storage's `fetch(accountId:keys:timeout:)`, which bounds itself, with its failures mapped.
    /// Loads are the hot path, so the account's logger is only made when there is something to log.
    func fetch(_ accountId: String, keys: [String]?) async throws(ServiceError) -> StoredProfile? {
        do {
            let (storage, timeout) = (storage, options.operationTimeout)
            return try await StatementSpan.run("fetch", schema: "profile") {
                try await storage.fetch(accountId: accountId, keys: keys, timeout: timeout)
            }
        } catch {
            throw mapped(error, operation: "fetch", logger: logger(for: accountId))
        }
    }

    private func mapped(_ error: any Error, operation: String, logger: Logger) -> ServiceError {
        let storageError = error as? ProfileStorageError
        if error is OperationTimeoutError || storageError?.underlying is OperationTimeoutError {
            logger.warning("profile storage timed out", metadata: [
                "konto.operation": "\(operation)",
                "konto.timeout": "\(options.operationTimeout)",
            ])
            return ServiceError.profileStorageUnavailable
        }
        switch storageError?.code {
        case .conflict:
            return ServiceError.profileAlreadyExists
        case .unavailable:
            logger.warning("profile storage unavailable", metadata: ["konto.operation": "\(operation)"])
            return ServiceError.profileStorageUnavailable
        case .failure, .notFound:
            // Profile's storage answers a missing record with nil, never notFound: one would be a defect.
            logger.error("profile storage failed", metadata: ["konto.operation": "\(operation)"])
            return ServiceError.profileStorageFailure
        case nil:
            // Only cancellation of the caller is left; the request is abandoned, so it may be retried.
            return ServiceError.profileStorageUnavailable
        }
    }
}

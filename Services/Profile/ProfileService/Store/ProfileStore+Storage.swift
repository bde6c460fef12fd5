import KontoPostgres
import Logging

extension ProfileStore {
    /// Runs one storage call within the operation timeout and maps its failures to ``ProfileError``s.
    func perform<Value: Sendable>(
        _ operation: String,
        logger: Logger,
        _ body: @escaping @Sendable (any ProfileStorage) async throws(ProfileStorageError) -> Value
    ) async throws(ProfileError) -> Value {
        let storage = storage
        do {
            return try await OperationTimeout.run(options.operationTimeout) {
                try await body(storage)
            }
        } catch let error as ProfileStorageError {
            switch error.code {
            case .alreadyExists:
                throw ProfileError.alreadyExists
            case .unavailable:
                logger.warning("profile storage unavailable", metadata: ["konto.operation": "\(operation)"])
                throw ProfileError.storageUnavailable
            case .failure:
                logger.error("profile storage failed", metadata: ["konto.operation": "\(operation)"])
                throw ProfileError.storageFailure
            }
        } catch is OperationTimeoutError {
            logger.warning("profile storage timed out", metadata: [
                "konto.operation": "\(operation)",
                "konto.timeout": "\(options.operationTimeout)",
            ])
            throw ProfileError.storageUnavailable
        } catch {
            // Only cancellation of the caller is left; the request is abandoned, so it may be retried.
            throw ProfileError.storageUnavailable
        }
    }
}

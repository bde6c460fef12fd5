import KontoModel
import Testing

@Suite("Storage errors")
struct StorageErrorTests {
    struct DriverError: Error, CustomStringConvertible {
        var description: String { "duplicate key value (normalized_user_id)=(ada@example.org)" }
    }

    @Test("the description names the code alone, never the driver's error (which may quote bound values); only unavailable is retryable")
    func description() {
        for code in [StorageError.Code.notFound, .conflict, .unavailable, .failure] {
            let error = StorageError(code, underlying: DriverError())
            #expect(error.description == "StorageError.\(code.rawValue)")
            #expect(!"\(error)".contains("ada@example.org"))
            #expect(error.isRetryable == (code == .unavailable))
        }
        #expect(StorageError(.failure, underlying: DriverError()).underlying is DriverError)
    }
}

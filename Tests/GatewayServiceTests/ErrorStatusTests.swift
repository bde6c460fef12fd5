import GatewayService
import HTTPTypes
import KontoModel
import Testing

/// The HTTP meaning of every code: the gateway's own table (the services and contracts know nothing of HTTP).
@Suite("Error statuses")
struct ErrorStatusTests {
    @Test("every declared code has a status, and the table names no undeclared code")
    func complete() {
        #expect(Set(KontoErrorCode.httpStatuses.keys) == KontoErrorCode.all)
        #expect(KontoErrorCode(rawValue: "future.code").httpStatus == .internalServerError)
    }

    @Test("the account model's codes have the statuses SpeziAccount's clients expect", arguments: [
        (AccountError.Code.credentialsTaken, 409), (.wrongCredentials, 401), (.unauthenticated, 401), (.reauthenticationRequired, 403),
        (.notFound, 404), (.versionConflict, 412), (.validationFailed, 422), (.accountIdChanged, 422),
        (.mutatingNonMutableAccountKeys, 422), (.missingAccountValue, 422), (.userIdNotRemovable, 422), (.invalidResetToken, 403),
        (.throttled, 429), (.alreadySignedUp, 409), (.wrongSecondFactor, 401), (.factorLocked, 403), (.invalidChallenge, 401),
    ])
    func accountStatuses(code: AccountError.Code, status: Int) {
        #expect(code.httpStatus.code == status)
        #expect(code.isRetryable == (status == 429))
    }

    @Test("a retryable code is a 503 (or 429 for throttling), and a 5xx that is not retryable is a failure to report")
    func retryableCodesAreUnavailable() {
        for code in KontoErrorCode.all {
            let status = code.httpStatus
            if code.isRetryable {
                #expect([503, 429].contains(status.code), "\(code) is retryable but \(status.code)")
            } else {
                #expect(status.code != 503, "\(code) is final but 503")
            }
        }
    }
}

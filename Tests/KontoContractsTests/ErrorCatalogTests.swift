import KontoContracts
import KontoModel
import KontoWire
import Testing

@Suite("Error catalog")
struct ErrorCatalogTests {
    @Test("every code is listed once")
    func unique() {
        let codes = (ErrorCatalog.wire + ErrorCatalog.account + ErrorCatalog.profile + ErrorCatalog.identity + ErrorCatalog.notifications).map(\.code)
        #expect(Set(codes).count == codes.count)
        #expect(ErrorCatalog.all.count == codes.count)
    }

    @Test("the wire layer's errors carry the retryable flag the catalog declares", arguments: [
        WireError.frameTooLarge(2, max: 1), .malformedFrame("m"), .unsupportedVersion(9), .authenticationFailed, .handshakeRequired,
        .protocolViolation("p"), .unknownMethod("x"), .forbidden(peer: "p", method: "m"), .invalidRequest("r"), .deadlineExceeded, .overloaded, .tooManyConnections,
        .shuttingDown, .timeout, .serviceUnavailable("s"), .connectionClosed, .cancelled,
    ])
    func wireFlags(_ error: WireError) throws {
        let info = try #require(ErrorCatalog.all[error.code], "\(error.code) is not in the catalog")
        #expect(info.isRetryable == error.isRetryable)
        #expect(info.httpStatus == (error.isRetryable ? 503 : 500))
    }

    @Test("every code a Profile method may answer with is in the catalog")
    func profileCodes() {
        for code in ProfileContract.errorCodes {
            #expect(ErrorCatalog.all[code] != nil, "\(code) is not in the catalog")
        }
    }

    @Test("Profile errors take their retryable flag from the catalog")
    func profileFlags() {
        for code: ProfileError.Code in [.notFound, .versionConflict, .validationFailed, .alreadyExists, .valueTooLarge, .accountTooLarge, .storageUnavailable, .storageFailure] {
            let error = ProfileError(code: code, message: "m")
            #expect(error.isRetryable == ErrorCatalog.isRetryable(code.rawValue))
            #expect(ErrorCatalog.all[code.rawValue] != nil)
        }
        #expect(ProfileError.storageUnavailable.isRetryable)
        #expect(!ProfileError.storageFailure.isRetryable)
    }

    @Test("the account model's codes have the statuses SpeziAccount's clients expect", arguments: [
        (AccountError.Code.credentialsTaken, 409), (.wrongCredentials, 401), (.unauthenticated, 401), (.reauthenticationRequired, 403),
        (.notFound, 404), (.versionConflict, 412), (.validationFailed, 422), (.accountIdChanged, 422),
        (.mutatingNonMutableAccountKeys, 422), (.missingAccountValue, 422), (.userIdNotRemovable, 422), (.invalidResetToken, 403),
        (.throttled, 429),
    ])
    func accountStatuses(code: AccountError.Code, status: Int) {
        #expect(ErrorCatalog.info(for: code.rawValue).httpStatus == status)
        #expect(ErrorCatalog.info(for: code.rawValue).isRetryable == (status == 429))
    }

    @Test("an undeclared code is a non-retryable 500")
    func unknown() {
        let info = ErrorCatalog.info(for: "future.code")
        #expect(info.httpStatus == 500)
        #expect(!info.isRetryable)
    }

    @Test("a Profile error read back from the wire keeps its code, flag and fields")
    func profileErrorFromWire() throws {
        let sent = ProfileError(code: .valueTooLarge, message: "too big", fields: [AccountFieldError(key: "biography", code: .invalidType, message: "m")])
        let wire = WireError(code: sent.wireErrorCode, message: sent.wireErrorMessage, isRetryable: sent.wireErrorIsRetryable, details: sent.wireErrorDetails)
        let received = try #require(ProfileError(wire))
        #expect(received == sent)
        #expect(ProfileError(WireError.timeout) == nil)
    }
}

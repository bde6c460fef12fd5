import Foundation
import KontoContracts
import KontoModel
import KontoWire
import Testing

@Suite("Account errors over the wire")
struct AccountErrorWireTests {
    @Test("code, message and every field error survive the trip")
    func roundTrip() throws {
        let error = AccountError(code: .validationFailed, fields: [
            AccountFieldError(key: "name", code: .missingAccountValue, message: "This field cannot be empty."),
            AccountFieldError(key: "plan", code: .invalidType, message: "Expected one of free, pro."),
        ])
        let wire = WireError(
            code: error.wireErrorCode,
            message: error.wireErrorMessage,
            isRetryable: error.wireErrorIsRetryable,
            details: error.wireErrorDetails
        )
        #expect(wire.code == .validationFailed)
        #expect(!wire.isRetryable)
        let details = try #require(try JSONSerialization.jsonObject(with: Data(wire.details)) as? [String: Any])
        #expect((details["fields"] as? [Any])?.count == 2)

        let decoded = try #require(AccountError(wire))
        #expect(decoded == error)
    }

    @Test("an error without fields sends no details")
    func noFieldsNoDetails() throws {
        let error = AccountError(code: .notFound)
        #expect(error.wireErrorDetails.isEmpty)
        let decoded = try #require(AccountError(WireError(code: error.wireErrorCode, message: error.wireErrorMessage)))
        #expect(decoded.code == .notFound)
        #expect(decoded.fields.isEmpty)
    }

    @Test("wire and service errors are not account errors", arguments: [
        WireError.Code.timeout, WireError.Code.serviceUnavailable, KontoErrorCode.profileStorageUnavailable,
    ])
    func otherFamilies(code: KontoErrorCode) {
        #expect(AccountError(WireError(code: code, message: "m")) == nil)
    }

    @Test("unreadable details lose the fields, not the error")
    func unreadableDetails() throws {
        let decoded = try #require(AccountError(WireError(code: .validationFailed, message: "m", details: Array("not json".utf8))))
        #expect(decoded.code == .validationFailed)
        #expect(decoded.fields.isEmpty)
    }
}

@Suite("Health reports")
struct HealthReportTests {
    @Test("ready only when every check is, and the status is in the JSON")
    func status() throws {
        let ready = HealthReport(service: "profile", checks: [.init(name: "database", status: .ready)])
        let notReady = HealthReport(service: "profile", checks: [
            .init(name: "database", status: .notReady, message: "connection refused"),
            .init(name: "wire", status: .ready),
        ])
        #expect(ready.status == .ready)
        #expect(notReady.status == .notReady)

        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(notReady), as: UTF8.self)
        #expect(json.contains(#""status":"notReady""#))
        #expect(try JSONDecoder().decode(HealthReport.self, from: Data(json.utf8)) == notReady)
    }
}

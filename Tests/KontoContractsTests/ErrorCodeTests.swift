import Foundation
import KontoContracts
import KontoModel
import KontoWire
import Testing

@Suite("Error codes")
struct ErrorCodeTests {
    @Test("every declared code has a family of its own prefix, and only the families' codes are declared")
    func families() {
        for code in KontoErrorCode.all {
            #expect(code.family != .unknown, "\(code)")
            #expect(code.rawValue.hasPrefix(code.family.rawValue + "."), "\(code)")
        }
        #expect(KontoErrorCode(rawValue: "future.code").family == .unknown)
        #expect(KontoErrorCode(rawValue: "nodot").family == .unknown)
        #expect(!KontoErrorCode(rawValue: "future.code").isRetryable)
        #expect(KontoErrorCode.retryableCodes.isSubset(of: KontoErrorCode.all))
    }

    @Test("field codes follow one style, every one is in docs/API.md's table, and every recorded example's is declared")
    func fieldCodes() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let style = /[a-z][A-Za-z]*/
        #expect(Set(AccountFieldError.Code.all).count == AccountFieldError.Code.all.count)
        for code in AccountFieldError.Code.all {
            #expect(code.rawValue.wholeMatch(of: style) != nil, "\(code) is not lowerCamelCase")
        }
        #expect(AccountFieldError.Code.rule("minimalPassword").rawValue == "rule.minimalPassword")
        let table = try String(contentsOf: root.appendingPathComponent("docs/API.md"), encoding: .utf8)
            .split(separator: "\n").filter { $0.hasPrefix("| `") }.compactMap { $0.split(separator: "`").dropFirst().first.map(String.init) }
        #expect(Set(table).isSuperset(of: AccountFieldError.Code.all.map(\.rawValue) + ["rule.<name>"]))
        // What the services answered when the examples were recorded: only declared codes and rules.
        let examples = root.appendingPathComponent("Tests/Contracts")
        let files = FileManager.default.enumerator(at: examples, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL }.filter { $0.pathExtension == "json" } ?? []
        var seen = Set<String>()
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            // A field error, as recorded (keys sorted): {"code": …, "key": …, "message": …}.
            for match in text.matches(of: /"code"\s*:\s*"([^"]+)"\s*,\s*"key"\s*:/) {
                seen.insert(String(match.output.1))
            }
        }
        #expect(seen.count >= 5, "the examples' field errors were not found")
        for code in seen {
            #expect(AccountFieldError.Code.all.contains(AccountFieldError.Code(rawValue: code)) || code.hasPrefix("rule."), "\(code) is recorded but not declared")
        }
    }

    @Test("the wire layer's errors carry their code's retryable flag", arguments: [
        WireError.frameTooLarge(2, max: 1), .malformedFrame("m"), .unsupportedVersion(9), .authenticationFailed, .handshakeRequired,
        .protocolViolation("p"), .unknownMethod("x"), .forbidden(peer: "p", method: "m"), .invalidRequest("r"), .deadlineExceeded, .overloaded, .tooManyConnections,
        .shuttingDown, .timeout, .serviceUnavailable("s"), .connectionClosed, .cancelled, .serverAuthenticationFailed,
    ])
    func wireFlags(_ error: WireError) throws {
        #expect(error.code.isKnown, "\(error.code) is not declared")
        #expect(error.code.family == .wire)
        #expect(error.code.isRetryable == error.isRetryable)
    }

    @Test("the wire's retryable codes are the unreachable, busy, late and leaving ones")
    func wireRetryable() {
        #expect(Set(KontoErrorCode.codes(of: .wire).filter(\.isRetryable)) == [
            .deadlineExceeded, .overloaded, .shuttingDown, .timeout, .serviceUnavailable, .connectionClosed,
        ])
    }

    @Test("every code a contract declares is declared in KontoErrors, in the contract's families")
    func contractCodes() {
        let contracts: [(codes: [KontoErrorCode], family: KontoErrorCode.Family)] = [
            (IdentityContract.errorCodes, .identity), (ProfileContract.errorCodes, .profile), (NotificationsContract.errorCodes, .notifications),
        ]
        for (codes, family) in contracts {
            for code in codes {
                #expect(code.isKnown, "\(code)")
                // Identity answers the admin API's refusals too (operator keys live there).
                #expect(code.family == family || code.family == .account || (family == .identity && code.family == .admin), "\(code)")
            }
            #expect(Set(KontoErrorCode.codes(of: family)).isSubset(of: codes), "a \(family) code no method answers with")
        }
    }

    @Test("service errors take their retryable flag from their code unless they say otherwise")
    func profileFlags() {
        for code: ServiceError.Code in [.notFound, .versionConflict, .validationFailed, .profileAlreadyExists, .profileValueTooLarge, .profileAccountTooLarge, .profileStorageUnavailable, .profileStorageFailure] {
            #expect(ServiceError(code: code, message: "m").isRetryable == code.isRetryable)
        }
        #expect(ServiceError.profileStorageUnavailable.isRetryable)
        #expect(!ServiceError.profileStorageFailure.isRetryable)
        // A modify that lost too many races: a conflict that may well succeed again, unlike a stale If-Match.
        #expect(ServiceError.versionConflict(retryable: true).isRetryable)
        #expect(!ServiceError.versionConflict().isRetryable)
    }

    @Test("a service error read back from the wire keeps its code, flag, fields and retry-after")
    func profileErrorFromWire() throws {
        let sent = ServiceError(code: .profileValueTooLarge, message: "too big", fields: [AccountFieldError(key: "biography", code: .invalidType, message: "m")])
        let wire = WireError(code: sent.wireErrorCode, message: sent.wireErrorMessage, isRetryable: sent.wireErrorIsRetryable, details: sent.wireErrorDetails)
        let received = try #require(ServiceError(wire))
        #expect(received == sent)
        // The same details bytes Profile sent before its error and Identity's became one.
        #expect(sent.wireErrorDetails == AccountFieldError.wireDetails(sent.fields))
        let throttled = ServiceError.throttled(retryAfterSeconds: 30)
        #expect(String(decoding: throttled.wireErrorDetails, as: UTF8.self) == #"{"retryAfter":30}"#)
        let back = try #require(ServiceError(WireError(code: throttled.code, message: throttled.message, details: throttled.wireErrorDetails)))
        #expect(back.retryAfterSeconds == 30 && back.isRetryable)
        // The wire's own failures, and codes of no service, are not service errors.
        #expect(ServiceError(WireError.timeout) == nil)
        #expect(ServiceError(WireError(code: .gatewayInternalError, message: "m")) == nil)
        #expect(ServiceError(WireError(code: KontoErrorCode(rawValue: "future.code"), message: "m")) == nil)
        #expect(ServiceError(WireError(code: .notificationsStorageFailure, message: "m"))?.code == .notificationsStorageFailure)
    }

    @Test("a code travels through JSON as its bare string")
    func json() throws {
        let data = try JSONEncoder().encode([KontoErrorCode.throttled])
        #expect(String(decoding: data, as: UTF8.self) == #"["account.throttled"]"#)
        #expect(try JSONDecoder().decode([KontoErrorCode].self, from: Data(#"["future.code"]"#.utf8)) == [KontoErrorCode(rawValue: "future.code")])
    }
}

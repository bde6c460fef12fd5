import Foundation
import IdentityService
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
import NIOCore
import Testing

/// Identity over the wire, with Profile, on PostgreSQL and in memory.
@Suite("Identity over the wire")
struct IdentityWireTests {
    @Test("sign up, log in, validate, log out, delete: the whole life of an account", arguments: IdentityStorageKind.allCases)
    func lifecycle(kind: IdentityStorageKind) async throws {
        try await IdentityServiceHarness.withServices(kind) { running in
            let identity = running.identity
            let signedUp = try await identity.signUp("Leland@Stanford.edu", details: ["email": .string("leland@stanford.edu"), "name": .object(["givenName": .string("Leland")])])
            #expect(signedUp.details.userId == "Leland@Stanford.edu")
            let profile = try await running.profile.call(ProfileContract.load, ProfileLoadRequest(accountId: signedUp.accountId))
            #expect(profile.details.email == "leland@stanford.edu")
            #expect(!profile.details.contains(PasswordKey.identifier))

            let session = try await identity.login("leland@stanford.edu")
            #expect(session.accountId == signedUp.accountId)
            #expect(session.details.email == "leland@stanford.edu")
            let info = try await identity.validate(session.session.token)
            #expect(info.accountId == signedUp.accountId)
            #expect(try await identity.call(IdentityContract.logout, IdentitySessionRequest(token: session.session.token)).sessionsEnded == 1)
            #expect(await wireErrorCode { try await identity.validate(session.session.token) } == AccountError.Code.unauthenticated)

            _ = try await identity.call(IdentityContract.delete, IdentityDeleteRequest(token: signedUp.session.token))
            #expect(await wireErrorCode { try await identity.login("leland@stanford.edu") } == AccountError.Code.wrongCredentials)
            // Identity leaves the profile to Profile's consumer of deletingAccount (no Notifications here; the end-to-end
            // journey sees it go): it calls no profile.delete of its own.
            #expect(try await running.profile.call(ProfileContract.load, ProfileLoadRequest(accountId: signedUp.accountId)).accountId == signedUp.accountId)
        }
    }

    @Test("a wrong password and an unknown user give byte-identical error frames", arguments: IdentityStorageKind.allCases)
    func byteIdentical(kind: IdentityStorageKind) async throws {
        try await IdentityServiceHarness.withServices(kind) { running in
            _ = try await running.identity.signUp("leland@stanford.edu")
            // Every field of the error frame: code, message, retryable flag and details.
            func attempt(_ userId: String) async throws -> WireError {
                try #require(await wireError { try await running.identity.login(userId, password: "not the password") })
            }
            let wrongPassword = try await attempt("leland@stanford.edu")
            let unknownUser = try await attempt("nobody@stanford.edu")
            #expect(wrongPassword.code == AccountError.Code.wrongCredentials)
            #expect(wrongPassword.code == unknownUser.code)
            #expect(wrongPassword.message == unknownUser.message)
            #expect(wrongPassword.isRetryable == unknownUser.isRetryable)
            #expect(wrongPassword.details == unknownUser.details)
        }
    }

    @Test("a 10 KB password is refused with its field error, at sign-up and login", arguments: IdentityStorageKind.allCases)
    func oversizedPassword(kind: IdentityStorageKind) async throws {
        try await IdentityServiceHarness.withServices(kind) { running in
            let huge = String(repeating: "p", count: 10_000)
            let error = try #require(await wireError { try await running.identity.signUp("leland@stanford.edu", password: huge) })
            #expect(error.code == AccountError.Code.validationFailed)
            #expect(AccountFieldError.fields(fromWireDetails: error.details).map(\.code) == [.valueTooLarge])
            #expect(await wireErrorCode { try await running.identity.login("leland@stanford.edu", password: huge) } == AccountError.Code.validationFailed)
        }
    }

    @Test("a 64 KiB userId is refused at sign-up and never reaches an index; a login with one is just wrong", arguments: IdentityStorageKind.allCases)
    func oversizedUserId(kind: IdentityStorageKind) async throws {
        try await IdentityServiceHarness.withServices(kind) { running in
            let huge = String(repeating: "u", count: 65_536) + "@example.org"
            let error = try #require(await wireError { try await running.identity.signUp(huge) })
            #expect(error.code == AccountError.Code.validationFailed)
            #expect(AccountFieldError.fields(fromWireDetails: error.details).map(\.code) == [.valueTooLarge])
            for _ in 0..<2 {
                #expect(await wireErrorCode { try await running.identity.login(huge, address: String(repeating: "a", count: 65_536)) } == AccountError.Code.wrongCredentials)
            }
            let signedUp = try await running.identity.signUp("leland@stanford.edu")
            #expect(await wireErrorCode {
                try await running.identity.call(IdentityContract.changeUserId, IdentityChangeUserIdRequest(token: signedUp.session.token, userId: huge))
            } == AccountError.Code.validationFailed)
            // A reset request for a malformed userId is refused as such (it says nothing about which accounts exist).
            #expect(await wireErrorCode {
                try await running.identity.call(IdentityContract.requestPasswordReset, IdentityPasswordResetRequest(userId: huge))
            } == AccountError.Code.validationFailed)
        }
    }

    @Test("every bad input answers with all of its field errors", arguments: IdentityStorageKind.allCases)
    func fieldErrors(kind: IdentityStorageKind) async throws {
        try await IdentityServiceHarness.withServices(kind) { running in
            let error = try #require(await wireError {
                try await running.identity.signUp("", password: "short", details: ["dateOfBirth": .bool(true), "shoeSize": .integer(44)])
            })
            let identity = ServiceError(error)
            #expect(identity?.code == AccountError.Code.validationFailed)
            #expect(Set(identity?.fields.map(\.key) ?? []) == ["userId", "password", "name", "dateOfBirth", "shoeSize"])
        }
    }
}

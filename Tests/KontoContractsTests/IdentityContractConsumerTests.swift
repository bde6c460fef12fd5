import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
import NIOCore
import Testing

/// The consumer side of the Identity contract: the Swift types the Gateway uses encode every recorded request (with
/// its password, since the methods that take one are declared to carry secrets) and decode every recorded answer.
@Suite("Identity contract, consumer side")
struct IdentityContractConsumerTests {
    static let loaded = Result { try ContractExample.samples(of: ContractExample.load(service: "identity", contractVersion: IdentityContract.version)) }
    static let examples: [ContractExample] = (try? loaded.get()) ?? []

    @Test("the examples load")
    func load() throws {
        _ = try Self.loaded.get()
    }

    @Test("the examples are there and cover every method")
    func coverage() {
        #expect(Set(Self.examples.map(\.method)) == Set(IdentityContract.methods))
    }

    @Test("requests and responses round-trip through the contract's types", arguments: examples)
    func roundTrip(_ example: ContractExample) throws {
        let codec = try #require(Self.codecs[example.method], "no contract method \(example.method)")
        #expect(try codec.request(example.request) == example.request)
        if let response = example.response {
            do {
                #expect(try codec.response(response) == response, "\(example.label): the response does not survive the consumer's type")
            } catch {
                Issue.record("\(example.consumerFailure(reading: "response", error))")
            }
        }
    }

    @Test("every recorded error is one the contract declares, and reads back as an ServiceError", arguments: examples.filter { $0.error != nil })
    func errors(_ example: ContractExample) throws {
        let error = try #require(example.error)
        #expect(IdentityContract.errorCodesByMethod[example.method]?.contains(error.code) == true, "see ContractCoverageTests")
        let wire = WireError(code: error.code, message: "m", isRetryable: error.retryable, details: error.details.map { Array($0.utf8) } ?? [])
        let identity = try #require(ServiceError(wire))
        #expect(identity.isRetryable == error.code.isRetryable)
        if error.code == AccountError.Code.throttled {
            #expect(identity.retryAfterSeconds != nil)
        } else if error.details != nil {
            #expect(!identity.fields.isEmpty, "details of \(example.name) do not decode as field errors")
        }
    }

    static let codecs: [String: ContractCodec] = Dictionary(uniqueKeysWithValues: [
        ContractCodec.entry(IdentityContract.signUp),
        ContractCodec.entry(IdentityContract.operatorAuthorize),
        ContractCodec.entry(IdentityContract.createOperatorKey),
        ContractCodec.entry(IdentityContract.listOperatorKeys),
        ContractCodec.entry(IdentityContract.revokeOperatorKey),
        ContractCodec.entry(IdentityContract.searchAccounts),
        ContractCodec.entry(IdentityContract.accountRecord),
        ContractCodec.entry(IdentityContract.disableAccount),
        ContractCodec.entry(IdentityContract.enableAccount),
        ContractCodec.entry(IdentityContract.accountSessions),
        ContractCodec.entry(IdentityContract.endAccountSessions),
        ContractCodec.entry(IdentityContract.auditEntries),
        ContractCodec.entry(IdentityContract.verifyAudit),
        ContractCodec.entry(IdentityContract.openIDClients),
        ContractCodec.entry(IdentityContract.createOpenIDClient),
        ContractCodec.entry(IdentityContract.updateOpenIDClient),
        ContractCodec.entry(IdentityContract.rotateOpenIDClientSecret),
        ContractCodec.entry(IdentityContract.removeOpenIDClient),
        ContractCodec.entry(IdentityContract.deleteAccount),
        ContractCodec.entry(IdentityContract.sendPasswordReset),
        ContractCodec.entry(IdentityContract.removeAccountFactor),
        ContractCodec.entry(IdentityContract.createAccount),
        ContractCodec.entry(IdentityContract.unlinkAccountIdentity),
        ContractCodec.entry(IdentityContract.updateAccount),
        ContractCodec.entry(IdentityContract.signInAnonymously),
        ContractCodec.entry(IdentityContract.login),
        ContractCodec.entry(IdentityContract.validateSession),
        ContractCodec.entry(IdentityContract.logout),
        ContractCodec.entry(IdentityContract.logoutEverywhere),
        ContractCodec.entry(IdentityContract.listSessions),
        ContractCodec.entry(IdentityContract.endSession),
        ContractCodec.entry(IdentityContract.endOtherSessions),
        ContractCodec.entry(IdentityContract.mailPreferences),
        ContractCodec.entry(IdentityContract.setMailPreferences),
        ContractCodec.entry(IdentityContract.exportAccount),
        ContractCodec.entry(IdentityContract.openIDKeys),
        ContractCodec.entry(IdentityContract.openIDAuthorize),
        ContractCodec.entry(IdentityContract.openIDLogout),
        ContractCodec.entry(IdentityContract.openIDToken),
        ContractCodec.entry(IdentityContract.openIDAccessToken),
        ContractCodec.entry(IdentityContract.openIDIntrospect),
        ContractCodec.entry(IdentityContract.openIDRevoke),
        ContractCodec.entry(IdentityContract.openIDApplications),
        ContractCodec.entry(IdentityContract.revokeOpenIDApplication),
        ContractCodec.entry(IdentityContract.reauthenticate),
        ContractCodec.entry(IdentityContract.changePassword),
        ContractCodec.entry(IdentityContract.changeUserId),
        ContractCodec.entry(IdentityContract.requestPasswordReset),
        ContractCodec.entry(IdentityContract.confirmPasswordReset),
        ContractCodec.entry(IdentityContract.requestEmailVerification),
        ContractCodec.entry(IdentityContract.confirmEmailVerification),
        ContractCodec.entry(IdentityContract.confirmEmailVerificationCode),
        ContractCodec.entry(IdentityContract.requestEmailCode),
        ContractCodec.entry(IdentityContract.emailCodeLogin),
        ContractCodec.entry(IdentityContract.delete),
        ContractCodec.entry(IdentityContract.completeSecondFactor),
        ContractCodec.entry(IdentityContract.listFactors),
        ContractCodec.entry(IdentityContract.enrollTOTP),
        ContractCodec.entry(IdentityContract.passkeyRegistrationOptions),
        ContractCodec.entry(IdentityContract.registerPasskey),
        ContractCodec.entry(IdentityContract.passkeyLoginOptions),
        ContractCodec.entry(IdentityContract.passkeyLogin),
        ContractCodec.entry(IdentityContract.confirmTOTP),
        ContractCodec.entry(IdentityContract.removeFactor),
        ContractCodec.entry(IdentityContract.regenerateRecoveryCodes),
        ContractCodec.entry(IdentityContract.externalLogin),
        ContractCodec.entry(IdentityContract.identityProviders),
        ContractCodec.entry(IdentityContract.externalAuthorization),
        ContractCodec.entry(IdentityContract.linkIdentity),
        ContractCodec.entry(IdentityContract.listIdentities),
        ContractCodec.entry(IdentityContract.unlinkIdentity),
        ContractCodec.entry(HealthContract.check),
    ])
}

import Foundation
import KontoContracts
import KontoModel
import KontoWire
import Testing

@Suite("Identity contract")
struct IdentityContractTests {
    @Test("exactly the methods that take a password, a code, a provider's token or an operator key carry secrets")
    func secretCarrying() {
        let carrying = [
            IdentityContract.signUp.carriesSecrets, IdentityContract.login.carriesSecrets,
            IdentityContract.reauthenticate.carriesSecrets, IdentityContract.changePassword.carriesSecrets,
            IdentityContract.changeUserId.carriesSecrets, IdentityContract.confirmPasswordReset.carriesSecrets,
            IdentityContract.delete.carriesSecrets, IdentityContract.completeSecondFactor.carriesSecrets,
            IdentityContract.enrollTOTP.carriesSecrets, IdentityContract.confirmTOTP.carriesSecrets,
            IdentityContract.removeFactor.carriesSecrets, IdentityContract.regenerateRecoveryCodes.carriesSecrets,
            IdentityContract.passkeyRegistrationOptions.carriesSecrets,
            // A mailed sign-in code is a first factor, as a password is.
            IdentityContract.emailCodeLogin.carriesSecrets,
            // A verification mail's code, beside the session it is confirmed with (8 digits: guessable were it logged).
            IdentityContract.confirmEmailVerificationCode.carriesSecrets,
            // A provider's ID token and code are bearer credentials; linking and unlinking may take the password.
            IdentityContract.externalLogin.carriesSecrets, IdentityContract.linkIdentity.carriesSecrets,
            IdentityContract.unlinkIdentity.carriesSecrets,
            // An operator key is a bearer credential too.
            IdentityContract.operatorAuthorize.carriesSecrets, IdentityContract.createOperatorKey.carriesSecrets,
            IdentityContract.listOperatorKeys.carriesSecrets, IdentityContract.revokeOperatorKey.carriesSecrets,
            IdentityContract.searchAccounts.carriesSecrets, IdentityContract.accountRecord.carriesSecrets,
            IdentityContract.disableAccount.carriesSecrets, IdentityContract.enableAccount.carriesSecrets,
            IdentityContract.accountSessions.carriesSecrets, IdentityContract.endAccountSessions.carriesSecrets,
            IdentityContract.auditEntries.carriesSecrets, IdentityContract.verifyAudit.carriesSecrets, IdentityContract.deleteAccount.carriesSecrets,
            IdentityContract.sendPasswordReset.carriesSecrets, IdentityContract.removeAccountFactor.carriesSecrets,
            IdentityContract.createAccount.carriesSecrets, IdentityContract.unlinkAccountIdentity.carriesSecrets, IdentityContract.updateAccount.carriesSecrets,
            IdentityContract.endSession.carriesSecrets, IdentityContract.endOtherSessions.carriesSecrets, IdentityContract.setMailPreferences.carriesSecrets,
            IdentityContract.exportAccount.carriesSecrets,
            // Console sessions, codes, client secrets, access and refresh tokens.
            IdentityContract.openIDAuthorize.carriesSecrets, IdentityContract.openIDLogout.carriesSecrets, IdentityContract.openIDToken.carriesSecrets, IdentityContract.openIDAccessToken.carriesSecrets,
            IdentityContract.openIDIntrospect.carriesSecrets, IdentityContract.openIDRevoke.carriesSecrets,
            // An operator key, and a client's secret made or rotated.
            IdentityContract.openIDClients.carriesSecrets, IdentityContract.createOpenIDClient.carriesSecrets, IdentityContract.updateOpenIDClient.carriesSecrets,
            IdentityContract.rotateOpenIDClientSecret.carriesSecrets, IdentityContract.removeOpenIDClient.carriesSecrets,
        ]
        #expect(carrying.allSatisfy { $0 })
        let plain = [
            IdentityContract.signInAnonymously.carriesSecrets, IdentityContract.validateSession.carriesSecrets,
            IdentityContract.logout.carriesSecrets, IdentityContract.logoutEverywhere.carriesSecrets, IdentityContract.listSessions.carriesSecrets,
            IdentityContract.mailPreferences.carriesSecrets,
            IdentityContract.requestPasswordReset.carriesSecrets, IdentityContract.listFactors.carriesSecrets,
            // A passkey's signed answers are single-use and bound to their challenge: nothing to keep secret.
            IdentityContract.registerPasskey.carriesSecrets, IdentityContract.passkeyLoginOptions.carriesSecrets,
            IdentityContract.passkeyLogin.carriesSecrets,
            // A verification token is single-use and proves only that a mailbox received it.
            IdentityContract.requestEmailVerification.carriesSecrets, IdentityContract.confirmEmailVerification.carriesSecrets,
            IdentityContract.requestEmailCode.carriesSecrets,
            IdentityContract.identityProviders.carriesSecrets, IdentityContract.externalAuthorization.carriesSecrets,
            IdentityContract.listIdentities.carriesSecrets,
            // Public keys only.
            IdentityContract.openIDKeys.carriesSecrets,
            // A session, as listing sessions.
            IdentityContract.openIDApplications.carriesSecrets, IdentityContract.revokeOpenIDApplication.carriesSecrets,
        ]
        #expect(plain.allSatisfy { !$0 })
        #expect(Set(IdentityContract.methods).count == 72)
    }

    @Test("a login request carries its password only as the contract encodes it")
    func loginEncoding() throws {
        let request = IdentityLoginRequest(userId: "ada@example.org", password: SecretString("hunter2 hunter2"), clientAddress: "192.0.2.1")
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(throws: EncodingError.self) { try encoder.encode(request) }
        for (key, flag) in IdentityContract.login.codingUserInfo {
            encoder.userInfo[key] = flag
        }
        let json = String(decoding: try encoder.encode(request), as: UTF8.self)
        #expect(json == #"{"clientAddress":"192.0.2.1","password":"hunter2 hunter2","userId":"ada@example.org"}"#)
        #expect(!"\(request)".contains("hunter2"))
    }

    @Test("sessions travel as plain strings with ISO 8601 times, and never print")
    func sessionEncoding() throws {
        let session = IdentitySession(token: BearerToken("tok_abc"), expiresAt: Timestamp(milliseconds: 1_767_225_600_123))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(session), as: UTF8.self)
        #expect(json == #"{"expiresAt":"2026-01-01T00:00:00.123Z","token":"tok_abc"}"#)
        #expect(try JSONDecoder().decode(IdentitySession.self, from: Data(json.utf8)) == session)
        #expect(!"\(session)".contains("tok_abc"))
        #expect(!String(reflecting: session).contains("tok_abc"))
    }
}

import Foundation
@testable import IdentityService
import KontoContracts
import KontoModel
import KontoTestSupport
import Testing

/// Passkeys through Identity's operations: registration from its options, as the login's second factor, passwordless,
/// for reauthentication; and what each refuses.
@Suite("Identity: passkeys")
struct IdentityStorePasskeyTests {
    static func authenticator() -> SoftwareAuthenticator {
        SoftwareAuthenticator(rpId: "localhost", origin: "http://localhost:8080")
    }

    static func decode<T: Decodable>(_ type: T.Type, _ object: [String: Any]) throws -> T {
        try JSONDecoder().decode(T.self, from: JSONSerialization.data(withJSONObject: object))
    }

    /// Registers the authenticator's passkey for the signed-up account (within the sign-up's privileged window).
    @discardableResult
    static func register(_ authenticator: SoftwareAuthenticator, _ fixture: IdentityFixture, token: BearerToken, name: String? = "Laptop") async throws -> IdentityFactor {
        let options = try await fixture.store.passkeyRegistrationOptions(IdentitySecuredRequest(token: token))
        authenticator.remember(userHandle: options.user.id)
        let credential = try decode(PasskeyRegistrationCredential.self, authenticator.registrationJSON(challenge: options.challenge))
        return try await fixture.store.registerPasskey(IdentityRegisterPasskeyRequest(token: token, name: name, credential: credential))
    }

    /// A session reauthenticated with the passkey: `aal2`, privileged (what security-related operations need once
    /// the account has a second factor).
    static func aal2(_ authenticator: SoftwareAuthenticator, _ fixture: IdentityFixture, token: BearerToken) async throws -> BearerToken {
        let privilege = try await fixture.store.reauthenticate(IdentityReauthenticateRequest(
            token: token, credential: assertion(authenticator, fixture.store.passkeyLoginOptions(.init()).challenge)
        ))
        return try #require(privilege.session).token
    }

    static func assertion(_ authenticator: SoftwareAuthenticator, _ challenge: String, tampering: SoftwareAuthenticator.Tampering = .init()) throws -> PasskeyAssertionCredential {
        try decode(PasskeyAssertionCredential.self, authenticator.assertionJSON(challenge: challenge, tampering: tampering))
    }

    @Test("registration: options name the relying party and exclude the account's passkeys; the passkey is a factor, announced")
    func registration() async throws {
        let fixture = try IdentityFixture()
        let signedUp = try await fixture.signUp()
        let authenticator = Self.authenticator()
        let factor = try await Self.register(authenticator, fixture, token: signedUp.session.token)
        #expect(factor.type == "passkey" && factor.name == "Laptop" && !factor.pending)
        #expect(try await fixture.events().contains { $0.kind == .factorAdded(factorId: factor.id, factorType: "passkey") })
        // With a passkey, more factors need a window opened with it.
        let needsFactor = await identityError { try await fixture.store.passkeyRegistrationOptions(IdentitySecuredRequest(token: signedUp.session.token)) }
        #expect(needsFactor?.code == AccountError.Code.secondFactorRequired)
        let token = try await Self.aal2(authenticator, fixture, token: signedUp.session.token)
        let options = try await fixture.store.passkeyRegistrationOptions(IdentitySecuredRequest(token: token))
        #expect(options.rp == .init(id: "localhost", name: "Konto"))
        #expect(options.user.name == "leland@stanford.edu")
        #expect(options.excludeCredentials.map(\.id) == [SoftwareAuthenticator.base64URL(authenticator.credentialId)])
        #expect(options.pubKeyCredParams.map(\.alg) == [-7, -8, -37, -257])
        #expect(options.attestation == "none")
        // The same authenticator again: registered already.
        let again = await identityError {
            let credential = try Self.decode(PasskeyRegistrationCredential.self, authenticator.registrationJSON(challenge: options.challenge))
            return try await fixture.store.registerPasskey(IdentityRegisterPasskeyRequest(token: token, credential: credential))
        }
        #expect(again?.code == AccountError.Code.validationFailed)
        #expect(again?.fields.first?.message.contains("registered already") == true)
        // A stored public key is sealed, not in the clear.
        let stored = try #require(try await fixture.storage.factors(accountId: signedUp.accountId).first { $0.kind == .passkey })
        let key = authenticator.publicKey.encoded
        #expect(stored.sealedSecret != key)
        let sealed = stored.sealedSecret ?? []
        let tail = Array(key.suffix(16))
        #expect(!(0...(max(0, sealed.count - 16))).contains { Array(sealed.dropFirst($0).prefix(16)) == tail })
    }

    @Test("registration refusals name the reason: another origin, another challenge, a replayed challenge, a forged self-attestation, a bad name")
    func registrationRefusals() async throws {
        let fixture = try IdentityFixture()
        let signedUp = try await fixture.signUp()
        let token = signedUp.session.token
        let authenticator = Self.authenticator()
        func refusal(_ make: (String) throws -> [String: Any], name: String? = nil) async -> String? {
            await identityError {
                let options = try await fixture.store.passkeyRegistrationOptions(IdentitySecuredRequest(token: token))
                let credential = try Self.decode(PasskeyRegistrationCredential.self, make(options.challenge))
                return try await fixture.store.registerPasskey(IdentityRegisterPasskeyRequest(token: token, name: name, credential: credential))
            }?.fields.first?.message
        }
        var evil = SoftwareAuthenticator.Tampering()
        evil.origin = "https://evil.example"
        #expect(await refusal { authenticator.registrationJSON(challenge: $0, tampering: evil) }?.contains("webauthn.wrongOrigin") == true)
        #expect(await refusal { _ in authenticator.registrationJSON(challenge: SoftwareAuthenticator.base64URL(Array(repeating: 7, count: 41))) }?.contains("webauthn.wrongChallenge") == true)
        var forged = SoftwareAuthenticator.Tampering()
        forged.forgeSignature = true
        #expect(await refusal { authenticator.registrationJSON(challenge: $0, attestation: .packedSelf, tampering: forged) }?.contains("webauthn.invalidAttestation") == true)
        #expect(await refusal({ authenticator.registrationJSON(challenge: $0) }, name: String(repeating: "x", count: 65))?.contains("64 characters") == true)

        // Another account's registration challenge does not register here; a used one does not work twice.
        let other = try await fixture.signUp("jane@stanford.edu")
        let foreign = try await fixture.store.passkeyRegistrationOptions(IdentitySecuredRequest(token: other.session.token))
        #expect(await refusal { _ in authenticator.registrationJSON(challenge: foreign.challenge) }?.contains("webauthn.wrongChallenge") == true)
        let options = try await fixture.store.passkeyRegistrationOptions(IdentitySecuredRequest(token: token))
        let first = try Self.decode(PasskeyRegistrationCredential.self, authenticator.registrationJSON(challenge: options.challenge))
        _ = try await fixture.store.registerPasskey(IdentityRegisterPasskeyRequest(token: token, credential: first))
        let replay = await identityError {
            let second = try Self.decode(PasskeyRegistrationCredential.self, Self.authenticator().registrationJSON(challenge: options.challenge))
            return try await fixture.store.registerPasskey(IdentityRegisterPasskeyRequest(token: token, credential: second))
        }
        #expect(replay?.fields.first?.message.contains("answered already") == true)
        // Expired options: five minutes.
        // (Reauthentication replaces the session: the fresh token from here on.)
        let fresh = try await Self.aal2(authenticator, fixture, token: token)
        let late = try await fixture.store.passkeyRegistrationOptions(IdentitySecuredRequest(token: fresh))
        fixture.clock.advance(by: .seconds(301))
        let expired = await identityError {
            let credential = try Self.decode(PasskeyRegistrationCredential.self, Self.authenticator().registrationJSON(challenge: late.challenge))
            return try await fixture.store.registerPasskey(IdentityRegisterPasskeyRequest(token: fresh, credential: credential))
        }
        #expect(expired?.fields.first?.message.contains("webauthn.wrongChallenge") == true)
    }

    @Test("options need the privileged window or the current password, like every security-related operation")
    func registrationIsSecurityRelated() async throws {
        var options = IdentityOptions()
        options.privilegedWindow = .seconds(60)
        let fixture = try IdentityFixture(options: options)
        let signedUp = try await fixture.signUp()
        fixture.clock.advance(by: .seconds(61))
        let closed = await identityError { try await fixture.store.passkeyRegistrationOptions(IdentitySecuredRequest(token: signedUp.session.token)) }
        #expect(closed?.code == AccountError.Code.reauthenticationRequired)
        let wrong = await identityError {
            try await fixture.store.passkeyRegistrationOptions(IdentitySecuredRequest(token: signedUp.session.token, currentPassword: SecretString("not it")))
        }
        #expect(wrong?.code == AccountError.Code.wrongCredentials)
        _ = try await fixture.store.passkeyRegistrationOptions(IdentitySecuredRequest(token: signedUp.session.token, currentPassword: SecretString("correct horse battery")))
    }

    @Test("as the second factor: a password gives a challenge with passkey options; the passkey completes the login at aal2")
    func secondFactor() async throws {
        let fixture = try IdentityFixture()
        let signedUp = try await fixture.signUp()
        let authenticator = Self.authenticator()
        try await Self.register(authenticator, fixture, token: signedUp.session.token)
        let challenge = try #require(try await fixture.loginAnswer().challenge)
        #expect(challenge.factors == ["passkey"])
        let options = try #require(challenge.passkey)
        #expect(options.allowCredentials.map(\.id) == [SoftwareAuthenticator.base64URL(authenticator.credentialId)])
        #expect(options.userVerification == "preferred")
        // Passwordless options are not the second factor's: the challenge is bound to the account.
        let loose = fixture.store.passkeyLoginOptions(IdentityPasskeyOptionsRequest())
        let unbound = await identityError {
            try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(challenge: challenge.token, credential: Self.assertion(authenticator, loose.challenge)))
        }
        #expect(unbound?.code == AccountError.Code.wrongSecondFactor)
        let session = try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(challenge: challenge.token, credential: Self.assertion(authenticator, options.challenge)))
        #expect(try await fixture.validate(session.session.token).assuranceLevel == 2)
        // A passkey and a code at once: one second factor.
        let both = await identityError {
            try await fixture.store.completeSecondFactor(IdentitySecondFactorRequest(
                challenge: try #require(try await fixture.loginAnswer().challenge).token, code: SecretString("123456"),
                credential: Self.assertion(authenticator, options.challenge)
            ))
        }
        #expect(both?.code == AccountError.Code.validationFailed)
    }

    @Test("passwordless: a verified passkey signs in at aal2; unverified, replayed, cloned, foreign or unknown ones do not")
    func passwordless() async throws {
        let fixture = try IdentityFixture()
        let signedUp = try await fixture.signUp()
        let authenticator = Self.authenticator()
        try await Self.register(authenticator, fixture, token: signedUp.session.token)
        let options = fixture.store.passkeyLoginOptions(IdentityPasskeyOptionsRequest())
        #expect(options.userVerification == "required" && options.allowCredentials.isEmpty && options.rpId == "localhost")
        let credential = try Self.assertion(authenticator, options.challenge)
        let session = try await fixture.store.passkeyLogin(IdentityPasskeyLoginRequest(credential: credential))
        #expect(session.accountId == signedUp.accountId)
        let info = try await fixture.validate(session.session.token)
        #expect(info.assuranceLevel == 2)
        // The same signed answer again: its challenge is used.
        let replay = await identityError { try await fixture.store.passkeyLogin(IdentityPasskeyLoginRequest(credential: credential)) }
        #expect(replay?.code == AccountError.Code.wrongCredentials)

        func refused(_ tampering: SoftwareAuthenticator.Tampering, by authenticator: SoftwareAuthenticator = authenticator) async throws -> String? {
            let options = fixture.store.passkeyLoginOptions(IdentityPasskeyOptionsRequest())
            let credential = try Self.assertion(authenticator, options.challenge, tampering: tampering)
            return await identityError { try await fixture.store.passkeyLogin(IdentityPasskeyLoginRequest(credential: credential)) }?.code.rawValue
        }
        var unverified = SoftwareAuthenticator.Tampering()
        unverified.userVerified = false
        #expect(try await refused(unverified) == AccountError.Code.wrongCredentials.rawValue)
        var cloned = SoftwareAuthenticator.Tampering()
        cloned.signCount = 1
        #expect(try await refused(cloned) == AccountError.Code.wrongCredentials.rawValue)
        #expect(try await refused(.init(), by: Self.authenticator()) == AccountError.Code.wrongCredentials.rawValue)
        var forged = SoftwareAuthenticator.Tampering()
        forged.forgeSignature = true
        #expect(try await refused(forged) == AccountError.Code.wrongCredentials.rawValue)
        // A user handle naming another account.
        let other = fixture.store.passkeyLoginOptions(IdentityPasskeyOptionsRequest())
        let foreign = try Self.decode(PasskeyAssertionCredential.self, authenticator.assertionJSON(challenge: other.challenge, userHandle: SoftwareAuthenticator.base64URL(Array("someone-else".utf8))))
        #expect(await identityError { try await fixture.store.passkeyLogin(IdentityPasskeyLoginRequest(credential: foreign)) }?.code == AccountError.Code.wrongCredentials)
        // Without its user handle a passwordless sign-in names no account: refused (WebAuthn §7.2 step 6).
        var nameless = authenticator.assertionJSON(challenge: fixture.store.passkeyLoginOptions(.init()).challenge)
        var response = try #require(nameless["response"] as? [String: Any])
        response["userHandle"] = nil
        nameless["response"] = response
        let handleless = try Self.decode(PasskeyAssertionCredential.self, nameless)
        #expect(await identityError { try await fixture.store.passkeyLogin(IdentityPasskeyLoginRequest(credential: handleless)) }?.code == AccountError.Code.wrongCredentials)
        // Still works after all that.
        _ = try await fixture.store.passkeyLogin(IdentityPasskeyLoginRequest(credential: Self.assertion(authenticator, fixture.store.passkeyLoginOptions(.init()).challenge)))
    }

    @Test("a key written into the table without the deployment's secret never verifies")
    func plantedKey() async throws {
        let storage = InMemoryIdentityStorage()
        let fixture = try IdentityFixture(storage: storage)
        let signedUp = try await fixture.signUp()
        let attacker = Self.authenticator()
        // Someone who can write the table, not holding the secret, plants their own key for the account.
        let planted = StoredFactor(
            id: "planted", accountId: signedUp.accountId, kind: .passkey, name: "Mine", sealedSecret: attacker.publicKey.encoded,
            confirmed: true, createdAt: fixture.clock.now, credentialId: attacker.credentialId, signCount: 0
        )
        #expect(try await storage.addPasskey(planted, events: []))
        let options = fixture.store.passkeyLoginOptions(IdentityPasskeyOptionsRequest())
        let credential = try Self.decode(PasskeyAssertionCredential.self, attacker.assertionJSON(challenge: options.challenge))
        #expect(await identityError { try await fixture.store.passkeyLogin(IdentityPasskeyLoginRequest(credential: credential)) }?.code == AccountError.Code.wrongCredentials)
    }

    @Test("reauthentication with a passkey opens an aal2 window where it verified the user (or the password came with it), aal1 where it did not; another account's passkey does not")
    func reauthentication() async throws {
        let fixture = try IdentityFixture()
        let signedUp = try await fixture.signUp()
        let authenticator = Self.authenticator()
        try await Self.register(authenticator, fixture, token: signedUp.session.token)
        let other = try await fixture.signUp("jane@stanford.edu")
        let otherAuthenticator = Self.authenticator()
        try await Self.register(otherAuthenticator, fixture, token: other.session.token)
        let foreign = await identityError {
            try await fixture.store.reauthenticate(IdentityReauthenticateRequest(
                token: signedUp.session.token, credential: Self.assertion(otherAuthenticator, fixture.store.passkeyLoginOptions(.init()).challenge)
            ))
        }
        #expect(foreign?.code == AccountError.Code.wrongCredentials)
        // Without user verification a passkey is something held, one factor: aal1; with the password beside it, aal2.
        var unverified = SoftwareAuthenticator.Tampering()
        unverified.userVerified = false
        let held = try await fixture.store.reauthenticate(IdentityReauthenticateRequest(
            token: signedUp.session.token, credential: Self.assertion(authenticator, fixture.store.passkeyLoginOptions(.init()).challenge, tampering: unverified)
        ))
        let heldToken = try #require(held.session).token
        #expect(try await fixture.validate(heldToken).assuranceLevel == 1)
        let both = try await fixture.store.reauthenticate(IdentityReauthenticateRequest(
            token: heldToken, password: SecretString("correct horse battery"),
            credential: Self.assertion(authenticator, fixture.store.passkeyLoginOptions(.init()).challenge, tampering: unverified)
        ))
        let bothToken = try #require(both.session).token
        #expect(try await fixture.validate(bothToken).assuranceLevel == 2)
        let privilege = try await fixture.store.reauthenticate(IdentityReauthenticateRequest(
            token: bothToken, credential: Self.assertion(authenticator, fixture.store.passkeyLoginOptions(.init()).challenge)
        ))
        let token = try #require(privilege.session).token
        #expect(try await fixture.validate(token).assuranceLevel == 2)
        // Removing the passkey (security-related, the aal2 window open): the password alone signs in again.
        let factors = try await fixture.store.listFactors(IdentitySessionRequest(token: token)).factors
        let removed = try await fixture.store.removeFactor(IdentityRemoveFactorRequest(token: token, factorId: try #require(factors.first { $0.type == "passkey" }).id))
        #expect(removed.remainingFactors == 0)
        #expect(try await fixture.loginAnswer().accountSession != nil)
    }
}

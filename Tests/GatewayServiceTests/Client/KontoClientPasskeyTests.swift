import Foundation
import KontoClient
import KontoModel
import KontoTestSupport
import Testing

/// Passkeys through the gateway's HTTP API with KontoClient, on the real services and PostgreSQL; a software passkey
/// plays the browser's authenticator for the deployment's default relying party (localhost, http://localhost:8080).
@Suite("KontoClient: passkeys", .timeLimit(.minutes(3)))
struct KontoClientPasskeyTests {
    typealias Harness = GatewayHarness

    static func authenticator() -> SoftwareAuthenticator {
        SoftwareAuthenticator(rpId: "localhost", origin: "http://localhost:8080")
    }

    static func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func json(_ object: [String: Any]) throws -> Data {
        try JSONSerialization.data(withJSONObject: object)
    }

    /// The passkey's answer to options the API gave (their challenge).
    static func answer(_ authenticator: SoftwareAuthenticator, to options: Data, tampering: SoftwareAuthenticator.Tampering = .init()) throws -> Data {
        let challenge = try #require(try object(options)["challenge"] as? String)
        return try json(authenticator.assertionJSON(challenge: challenge, tampering: tampering))
    }

    static func register(_ authenticator: SoftwareAuthenticator, with client: KontoClient, name: String = "Laptop") async throws -> KontoFactor {
        let options = try object(try await client.passkeyRegistrationOptions())
        let user = try #require(options["user"] as? [String: Any])
        authenticator.remember(userHandle: try #require(user["id"] as? String))
        let challenge = try #require(options["challenge"] as? String)
        return try await client.registerPasskey(credentialJSON: json(authenticator.registrationJSON(challenge: challenge)), name: name)
    }

    @Test("register a passkey; a stolen password alone gets a challenge the passkey answers (aal2); the passkey alone signs in; it reauthenticates and is removed")
    func journey() async throws {
        try await Harness.withGateway { gateway in
            let owner = KontoClient(gatewayURL: gateway.baseURL)
            let signedUp = try await owner.signUp(userId: "knuth@example.org", password: "literate programming", details: KontoClientTests.named("Donald"))
            let options = try Self.object(try await owner.passkeyRegistrationOptions())
            #expect((options["rp"] as? [String: Any])?["id"] as? String == "localhost")
            #expect(options["attestation"] as? String == "none")
            let authenticator = Self.authenticator()
            let factor = try await Self.register(authenticator, with: owner)
            #expect(factor.type == "passkey" && factor.name == "Laptop" && !factor.isPending)
            #expect(try await owner.factors().map(\.type) == ["passkey"])

            // The password alone: a challenge naming the passkey, with options allowing it.
            let thief = KontoClient(gatewayURL: gateway.baseURL)
            let challenged = await KontoClientTests.refusal { try await thief.logIn(userId: "knuth@example.org", password: "literate programming") }
            #expect(challenged?.status == 202)
            let challenge = try #require(challenged?.challenge)
            #expect(challenge.factors == ["passkey"])
            let mfaOptions = try #require(challenge.passkeyOptions)
            let allowed = try #require(try Self.object(mfaOptions)["allowCredentials"] as? [[String: Any]])
            #expect(allowed.compactMap { $0["id"] as? String } == [SoftwareAuthenticator.base64URL(authenticator.credentialId)])
            // Another passkey (the thief's own) does not answer it.
            let refused = await KontoClientTests.refusal {
                try await thief.completeLogIn(challenge: challenge, passkeyCredentialJSON: Self.answer(Self.authenticator(), to: mfaOptions))
            }
            #expect(refused?.code == "account.wrongSecondFactor" && refused?.status == 401)
            let laptop = KontoClient(gatewayURL: gateway.baseURL)
            let completed = try await laptop.completeLogIn(challenge: challenge, passkeyCredentialJSON: Self.answer(authenticator, to: mfaOptions))
            #expect(completed.session.accountId == signedUp.session.accountId)

            // Passwordless.
            let phone = KontoClient(gatewayURL: gateway.baseURL)
            let signIn = try await phone.logIn(passkeyCredentialJSON: Self.answer(authenticator, to: try await phone.passkeyLoginOptions()))
            #expect(signIn.session.accountId == signedUp.session.accountId)
            #expect(signIn.session.userId == "knuth@example.org")
            #expect(try await phone.account()[\.name]?.givenName == "Donald")
            // A page of another origin, or no user verification: refused like a wrong password.
            var evil = SoftwareAuthenticator.Tampering()
            evil.origin = "https://evil.example"
            var unverified = SoftwareAuthenticator.Tampering()
            unverified.userVerified = false
            for tampering in [evil, unverified] {
                let refusal = await KontoClientTests.refusal {
                    try await phone.logIn(passkeyCredentialJSON: Self.answer(authenticator, to: try await phone.passkeyLoginOptions(), tampering: tampering))
                }
                #expect(refusal?.code == "account.wrongCredentials" && refusal?.status == 401)
            }
            let malformed = await KontoClientTests.refusal { try await phone.logIn(passkeyCredentialJSON: Data("{}".utf8)) }
            #expect(malformed?.code == KontoClientError.Code.invalidInput)

            // Security-related calls of the sign-up's session (aal1) need the passkey now: the password is not enough;
            // reauthenticate with the passkey, then remove it. (The passwordless session is aal2 already.)
            let needsFactor = await KontoClientTests.refusal { try await owner.passkeyRegistrationOptions(currentPassword: "literate programming") }
            #expect(needsFactor?.code == "account.secondFactorRequired")
            _ = try await owner.reauthenticate(passkeyCredentialJSON: Self.answer(authenticator, to: try await owner.passkeyLoginOptions()))
            let remaining = try await owner.removeFactor(id: factor.id)
            #expect(remaining == 0)
            _ = try await KontoClient(gatewayURL: gateway.baseURL).logIn(userId: "knuth@example.org", password: "literate programming")
        }
    }

    @Test("a registration the verifier refuses is 422 saying why")
    func refusals() async throws {
        try await Harness.withGateway { gateway in
            let owner = KontoClient(gatewayURL: gateway.baseURL)
            try await owner.signUp(userId: "dijkstra@example.org", password: "goto considered harmful", details: KontoClientTests.named("Edsger"))
            let options = try Self.object(try await owner.passkeyRegistrationOptions())
            let challenge = try #require(options["challenge"] as? String)
            var evil = SoftwareAuthenticator.Tampering()
            evil.origin = "https://evil.example"
            let wrongOrigin = await KontoClientTests.refusal {
                try await owner.registerPasskey(credentialJSON: Self.json(Self.authenticator().registrationJSON(challenge: challenge, tampering: evil)))
            }
            #expect(wrongOrigin?.status == 422 && wrongOrigin?.code == "account.validationFailed")
            #expect(wrongOrigin?.fields.first?.message.contains("webauthn.wrongOrigin") == true)
            var other = SoftwareAuthenticator.Tampering()
            other.rpId = "evil.example"
            let wrongRP = await KontoClientTests.refusal {
                try await owner.registerPasskey(credentialJSON: Self.json(Self.authenticator().registrationJSON(challenge: challenge, tampering: other)))
            }
            #expect(wrongRP?.fields.first?.message.contains("webauthn.wrongRelyingParty") == true)
        }
    }
}

import Crypto
import Foundation
import KontoTestSupport
import Testing

/// A configured provider that signs hostile values (issue 44, 3): dates far in the future, beyond any date and
/// beyond a 64-bit number, a claim named twice. Each token is refused with the documented code by the real
/// konto-identity on PostgreSQL, which stays up: the next good token signs in.
@Suite("End to end: a provider's hostile tokens", .serialized, .timeLimit(.minutes(5)))
struct HostileProviderTests {
    @Test("far-future and out-of-range exp values are refused account.invalidIdentityToken, and Identity keeps serving")
    func farFutureDates() async throws {
        let onCI = ProcessInfo.processInfo.environment["CI"] != nil
        try #require(OIDCProviderProcess.python != nil || !onCI, "CI is set, but KONTO_OIDC_PYTHON is not")
        guard OIDCProviderProcess.python != nil else { return }
        let key = P256.Signing.PrivateKey()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("konto-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let publicKey = directory.appendingPathComponent("public.pem").path
        try key.publicKey.pemRepresentation.write(toFile: publicKey, atomically: true, encoding: .utf8)
        try key.pemRepresentation.write(toFile: directory.appendingPathComponent("AuthKey.p8").path, atomically: true, encoding: .utf8)
        let apple = try await OIDCProviderProcess.startApple(teamId: "TEAM123456", keyId: "KEY1234567", publicKeyPath: publicKey, clientIds: ["org.example.app", "org.example.web"])
        do {
            try await Self.signIns(apple: apple, directory: directory)
        } catch {
            await apple.stop()
            throw error
        }
        await apple.stop()
    }

    static func signIns(apple: OIDCProviderProcess, directory: URL) async throws {
        let providers = directory.appendingPathComponent("providers.yaml").path
        try """
        providers:
          - name: apple
            type: apple
            issuer: \(apple.issuer)
            clientId: org.example.web
            audiences: [org.example.app]
            teamId: TEAM123456
            keyId: KEY1234567
            privateKeyFile: AuthKey.p8
        """.write(toFile: providers, atomically: true, encoding: .utf8)
        try await EndToEndSystem.with(environment: ["KONTO_IDENTITY_PROVIDERS": providers]) { system in
            let http = RawHTTP(system: system)
            try await apple.control("/_control/users", ["sub": "000001.hostile", "email": "eve@privaterelay.appleid.com", "email_verified": "true"])
            func signIn(expiresIn: Any, nonce: String) async throws -> RawHTTP.Answer {
                let minted = try await apple.control("/_control/id-token", [
                    "sub": "000001.hostile", "aud": "org.example.app", "nonce": Self.hashed(nonce), "exp_in": expiresIn,
                ])
                let token = try #require(minted["id_token"] as? String)
                return try await http.send("POST", "/v1/sessions/oidc", json: ["provider": "apple", "idToken": token, "nonce": nonce])
            }
            // Eight days; a date past the year 9999; seconds whose milliseconds overflow 64 bits; beyond 64 bits.
            let hostile: [Any] = [8 * 86_400, 400_000_000_000, 9_300_000_000_000_000 as Int64, Double(1e20)]
            for (index, expiresIn) in hostile.enumerated() {
                let answer = try await signIn(expiresIn: expiresIn, nonce: "hostile-nonce-\(index)-0123456789")
                #expect(answer.status == 401 && answer.code == "account.invalidIdentityToken", "exp_in \(expiresIn): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
                #expect(String(decoding: answer.body, as: UTF8.self).contains("exp more than 7 days ahead"), "exp_in \(expiresIn)")
                #expect(system.stack.process("konto-identity")?.isRunning == true, "Identity went down: \(system.stack.logTails())")
            }
            // A good token still works: Identity answers (a new account, or the sign-up form for deploy/accounts.yaml's
            // required keys).
            let good = try await signIn(expiresIn: 600, nonce: "good-nonce-0123456789abcdef")
            #expect(good.status == 201 || good.status == 202, "\(good.status) \(String(decoding: good.body, as: UTF8.self))")
            #expect(system.stack.process("konto-identity")?.isRunning == true)
        }
    }

    static func hashed(_ nonce: String) -> String {
        SHA256.hash(data: Array(nonce.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

import Foundation
import KontoClient
import KontoTestSupport
import Testing

/// `konto factors` and a login with a second factor, as a user runs them: the real binary against `konto stack`,
/// the test playing the authenticator app (its codes from the secret the command printed).
@Suite("konto second-factor commands", .timeLimit(.minutes(3)))
struct KontoFactorCommandTests {
    static let password = "correct horse battery"

    @Test("totp enroll (factors totp) prints the otpauth URI and confirms with the app's code; login then asks for a code; recovery codes; factors lists them; a wrong code exits 1")
    func secondFactor() async throws {
        try await KontoStackProcess.with { stack in
            let signUp = try await stack.konto("signup", "ada@example.org", "name=Ada Lovelace", input: Self.password + "\n")
            #expect(signUp.status == 0, "\(signUp.standardError)")
            let none = try await stack.konto("factors")
            #expect(none.standardOutput.contains("No second factor"), "\(none.standardOutput)")

            // The command prints the URI and the secret, then reads the first code from standard input.
            var secret: String?
            var uri: String?
            let enrol = try await ConversingProcess.run(
                stack.executable, ["totp", "enroll"],
                environment: ["KONTO_GATEWAY": stack.gatewayURL, "KONTO_SESSION_FILE": stack.sessionFile()],
                bound: .seconds(60)
            ) { line in
                if line.contains("otpauth://") { uri = line.trimmingCharacters(in: .whitespaces) }
                guard let range = line.range(of: "secret: ") else { return nil }
                secret = String(line[range.upperBound...]).trimmingCharacters(in: .whitespaces)
                return secret.flatMap { TOTPTestCode.code(base32Secret: $0) }
            }
            #expect(enrol.status == 0, "\(enrol.output)")
            #expect(enrol.output.contains("Authenticator app added"))
            // The next step it suggests names the reauthentication it needs.
            #expect(enrol.output.contains("`konto reauthenticate --code` with the app's next code, then `konto factors recovery-codes`"), "\(enrol.output)")
            #expect(uri?.hasPrefix("otpauth://totp/Konto:ada@example.org?") == true, "\(enrol.output)")
            let base32 = try #require(secret)

            // With a second factor, the sign-up's session (password only) may not make recovery codes.
            let weak = try await stack.konto("factors", "recovery-codes")
            #expect(weak.status == 1, "\(weak.standardError)")
            #expect(weak.standardError == "konto: this needs the second factor again (the account has one): `konto reauthenticate --code`, then this again\n")
            #expect(try await stack.konto("logout").status == 0)
            // The password, then the code of the next step (the confirming one was used), on standard input.
            let next = try #require(TOTPTestCode.code(base32Secret: base32, offset: 1))
            let login = try await stack.konto("login", "ada@example.org", input: Self.password + "\n" + next + "\n")
            #expect(login.status == 0, "\(login.standardError)")
            #expect(login.standardOutput.hasPrefix("Logged in as ada@example.org"))

            let codes = try await stack.konto("factors", "recovery-codes")
            #expect(codes.status == 0, "\(codes.standardError)")
            let recovery = codes.standardOutput.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.count == 14 && $0.split(separator: "-").count == 3 }
            #expect(recovery.count == 10, "\(codes.standardOutput)")
            let listed = try await stack.konto("factors", "--json")
            let factors = try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [[String: Any]]
            #expect(factors?.compactMap { $0["type"] as? String } == ["totp", "recoveryCodes"], "\(listed.standardOutput)")
            #expect(try await stack.konto("logout").status == 0)
            try #require(recovery.count == 10)
            // A recovery code signs in too; a wrong code is a refusal (exit 1) and keeps no session.
            let byRecovery = try await stack.konto("login", "ada@example.org", input: Self.password + "\n" + recovery[0] + "\n")
            #expect(byRecovery.status == 0, "\(byRecovery.standardError)")
            #expect(try await stack.konto("logout").status == 0)
            let wrong = try await stack.konto("login", "ada@example.org", input: Self.password + "\n" + "abcdef\n")
            #expect(wrong.status == 1, "\(wrong.standardError)")
            // The code's own refusal, not a wrong password's.
            #expect(wrong.standardError == "konto: wrong code, or one used already: enter the one the authenticator app shows now\n")
            #expect(try await stack.konto("whoami").status == 2)

            // Removing the app needs the second factor again: the password alone is refused, a recovery code opens it.
            let session = try await stack.konto("login", "ada@example.org", input: Self.password + "\n" + recovery[1] + "\n")
            #expect(session.status == 0, "\(session.standardError)")
            #expect(try await stack.konto("reauthenticate", input: Self.password + "\n").status == 0)
            let factorId = try #require(factors?.first?["id"] as? String)
            let refused = try await stack.konto("factors", "remove", factorId)
            #expect(refused.status == 1 && refused.standardError.contains("second factor"), "\(refused.standardError)")
            let opened = try await stack.konto("reauthenticate", "--code", input: recovery[2] + "\n")
            #expect(opened.status == 0, "\(opened.standardError)")
            let removed = try await stack.konto("factors", "remove", factorId)
            #expect(removed.status == 0, "\(removed.standardError)")
            #expect(removed.standardOutput.contains("password alone signs in again"))
        }
    }

    @Test("an account whose second factor is a passkey: factors lists it; login says a terminal cannot use it (exit 1)")
    func passkey() async throws {
        try await KontoStackProcess.with { stack in
            #expect(try await stack.konto("signup", "knuth@example.org", "name=Donald Knuth", input: Self.password + "\n").status == 0)
            // The passkey is made by a browser or an app: here the API, with a software passkey for the stack's origin.
            let origin = stack.gatewayURL.replacingOccurrences(of: "127.0.0.1", with: "localhost")
            let authenticator = SoftwareAuthenticator(rpId: "localhost", origin: origin)
            let app = KontoClient(gatewayURL: stack.gatewayURL)
            try await app.logIn(userId: "knuth@example.org", password: Self.password)
            let options = try #require(try JSONSerialization.jsonObject(with: try await app.passkeyRegistrationOptions()) as? [String: Any])
            let credential = authenticator.registrationJSON(challenge: try #require(options["challenge"] as? String))
            try await app.registerPasskey(credentialJSON: JSONSerialization.data(withJSONObject: credential), name: "Laptop")

            let listed = try await stack.konto("factors")
            #expect(listed.status == 0 && listed.standardOutput.contains("Laptop") && listed.standardOutput.contains("passkey"), "\(listed.standardOutput)")
            #expect(try await stack.konto("logout").status == 0)
            let refused = try await stack.konto("login", "knuth@example.org", input: Self.password + "\n")
            #expect(refused.status == 1, "\(refused.standardError)")
            #expect(refused.standardError.contains("a terminal cannot use"), "\(refused.standardError)")
            #expect(!refused.standardError.contains(Self.password))
        }
    }
}

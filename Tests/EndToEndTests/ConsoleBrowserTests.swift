import Foundation
import KontoClient
import KontoClientAsyncHTTPClient
import KontoContracts
import KontoTestSupport
import Testing

/// The web console (/account/) in a real browser: Tests/Browser/console_journey.py drives headless Chromium through
/// Selenium against the whole system — sign-up with every key type, a field error with the input kept, markup in a
/// name shown as text, the address confirmed through the link in the mail an SMTP server caught, sign-in with a code
/// from another mail, edit, log out and in, a password change that asks for the current password, a reset through
/// the token the mailer webhook received, deletion — and fails on any error in the browser's console. Screenshots
/// go to .build/console-screenshots/. scripts/test.sh installs chromium, chromedriver and Selenium and names them in
/// KONTO_BROWSER_PYTHON and KONTO_CHROMEDRIVER; without them the test is skipped, except on CI (CI set), which
/// always runs through scripts/test.sh, so there it fails.
// One journey at a time: each runs a whole system and a browser, which two cores would otherwise run twice at once.
@Suite("Web console in Chromium", .serialized, .timeLimit(.minutes(8)))
struct ConsoleBrowserTests {
    static let python = ProcessInfo.processInfo.environment["KONTO_BROWSER_PYTHON"]
    static let chromedriver = ProcessInfo.processInfo.environment["KONTO_CHROMEDRIVER"]
    static let onCI = ProcessInfo.processInfo.environment["CI"] != nil
    /// The whole journey, browser start included: about 45 s alone; beside the rest of the suite on CI's two cores
    /// the tests of this suite took 200–400 s each (the system before a journey may take minutes to become ready),
    /// hence the suite's 8 minutes. The script bounds itself a little sooner (240 s) so that a hang still ends with
    /// its failure.png and its last step named.
    static let bound: Duration = .seconds(270)

    @Test(
        "a user's journey through the console, with no error in the browser's console",
        .enabled(if: (python != nil && chromedriver != nil) || onCI, "KONTO_BROWSER_PYTHON and KONTO_CHROMEDRIVER are not set (scripts/test.sh sets them)")
    )
    func journey() async throws {
        guard let (python, chromedriver, script, screenshots) = try Self.prepare(screenshots: "console-screenshots") else { return }
        print("console browser test: screenshots in \(screenshots)")

        // Mail goes to a real SMTP server: the journey confirms its address with the link from the captured mail.
        try #require(MailCatcher.python != nil || !Self.onCI, "CI is set, but KONTO_AIOSMTPD_PYTHON is not")
        let catcher = MailCatcher.python == nil ? nil : try await MailCatcher.start()
        // And a real OpenID Connect provider: the journey ends signing in through it.
        try #require(OIDCProviderProcess.python != nil || !Self.onCI, "CI is set, but KONTO_OIDC_PYTHON is not")
        let provider = OIDCProviderProcess.python == nil ? nil : try await OIDCProviderProcess.startGeneric()
        let providersFile = FileManager.default.temporaryDirectory.appendingPathComponent("konto-providers-\(UUID().uuidString).yaml").path
        do {
            if let provider {
                try """
                providers:
                  - name: example
                    displayName: Example ID
                    issuer: \(provider.issuer)
                    clientId: konto-console
                    clientSecret: console-secret
                """.write(toFile: providersFile, atomically: true, encoding: .utf8)
            }
            try await journey(python: python, chromedriver: chromedriver, script: script, screenshots: screenshots, catcher: catcher, providers: provider == nil ? nil : providersFile)
        } catch {
            await catcher?.stop()
            await provider?.stop()
            try? FileManager.default.removeItem(atPath: providersFile)
            throw error
        }
        await catcher?.stop()
        await provider?.stop()
        try? FileManager.default.removeItem(atPath: providersFile)
    }

    private func journey(python: String, chromedriver: String, script: String, screenshots: String, catcher: MailCatcher?, providers: String?) async throws {
        var environment = ["KONTO_IDENTITY_PRIVILEGED_SECONDS": "0"]
        if let providers {
            environment["KONTO_IDENTITY_PROVIDERS"] = providers
        }
        if let catcher {
            environment["KONTO_MAIL_SMTP_URL"] = "smtp://127.0.0.1:\(catcher.port)?tls=none"
            environment["KONTO_MAIL_FROM"] = "Konto <accounts@example.org>"
            environment["KONTO_IDENTITY_EMAIL_CODE_LOGIN"] = "true"
        }
        // A privileged window of 0 s: every security-related change asks for the current password at once, so the
        // journey sees the reauthentication without waiting for a window to close.
        try await EndToEndSystem.with(environment: environment) { system in
            let run = try await ConversingProcess.run(python, ["-u", script], environment: [
                "KONTO_GATEWAY_URL": system.gatewayURL,
                "KONTO_SCREENSHOTS": screenshots,
                "KONTO_CHROMEDRIVER": chromedriver,
                "KONTO_CONSOLE_PRIVILEGED_SECONDS": "0",
                "KONTO_PROVIDER_NAME": providers == nil ? "" : "example",
                "PYTHONUNBUFFERED": "1",
                // Selenium Manager must not look for a driver or browser to download: Debian's are given.
                "SE_OFFLINE": "true",
                "SE_AVOID_STATS": "true",
            ], bound: Self.bound) { line in
                print("browser: \(line)")
                if line.hasPrefix("need-verification-link ") {
                    let userId = String(line.dropFirst("need-verification-link ".count))
                    guard let catcher else { return "" }
                    return await Self.mail(to: userId, subject: "Confirm your email address", catcher: catcher)?.link(containing: "/account/verify?token=") ?? ""
                }
                if line.hasPrefix("need-sign-in-code ") {
                    let userId = String(line.dropFirst("need-sign-in-code ".count))
                    guard let catcher, let text = await Self.mail(to: userId, subject: "Your sign-in code", catcher: catcher)?.text else { return "" }
                    return text.firstMatch(of: /\b[0-9]{8}\b/).map { String($0.output) } ?? ""
                }
                guard line.hasPrefix("need-reset-token ") else { return nil }
                let userId = String(line.dropFirst("need-reset-token ".count))
                do {
                    return try await system.resetToken(for: userId)
                } catch {
                    print("browser: no reset token for \(userId): \(error)")
                    return ""
                }
            }
            let (status, timedOut, output) = (run.status, run.timedOut, run.output.suffix(12_000))
            #expect(!timedOut, "the journey did not end within \(Self.bound), so it was ended")
            #expect(Self.failure(status: status, output: run.output) == nil, "the console's journey failed (exit \(status)); screenshots in \(screenshots):\n\(output)")
        }
    }

    @Test(
        "the admin console on the admin listener: a key signs in, finds, disables, enables, ends sessions, reads the audit trail, deletes; a key without the scope is refused",
        .enabled(if: (python != nil && chromedriver != nil) || onCI, "KONTO_BROWSER_PYTHON and KONTO_CHROMEDRIVER are not set (scripts/test.sh sets them)")
    )
    func admin() async throws {
        guard let (python, chromedriver, script, screenshots) = try Self.prepare(screenshots: "console-screenshots-admin") else { return }
        let bootstrap = OperatorKeyText.generate().text
        let adminPort = try FreePort.loopback()
        try await EndToEndSystem.with(environment: [
            "KONTO_GATEWAY_ADMIN_PORT": "\(adminPort)", "KONTO_IDENTITY_BOOTSTRAP_OPERATOR_KEY": bootstrap,
        ]) { system in
            let adminURL = "http://127.0.0.1:\(adminPort)"
            let operators = KontoAdmin(adminURL: adminURL, key: bootstrap, httpClient: system.http)
            let reader = try await operators.createKey(name: "reader", scopes: ["accounts:read"]).secret
            let ada = system.client()
            let schema = try await ada.schema()
            let signedUp = try await ada.signUp(
                userId: "ada.admin@example.org", password: JourneyTests.password,
                details: try schema.details(fromAssignments: ["name=Ada Lovelace", "handle=ada_admin"])
            )
            let bob = try await system.client().signUp(
                userId: "bob.admin@example.org", password: JourneyTests.password,
                details: try schema.details(fromAssignments: ["name=Bob Babbage", "handle=bob_admin"])
            )
            let run = try await ConversingProcess.run(python, ["-u", script], environment: [
                "KONTO_GATEWAY_URL": adminURL,
                "KONTO_SCREENSHOTS": screenshots,
                "KONTO_CHROMEDRIVER": chromedriver,
                "KONTO_JOURNEY": "admin",
                "KONTO_ADMIN_KEY": bootstrap,
                "KONTO_READER_KEY": reader,
                "KONTO_ADA_ID": signedUp.session.accountId,
                "KONTO_ADA_USER_ID": "ada.admin@example.org",
                "KONTO_BOB_ID": bob.session.accountId,
                "KONTO_BOB_USER_ID": "bob.admin@example.org",
                "PYTHONUNBUFFERED": "1",
                "SE_OFFLINE": "true",
                "SE_AVOID_STATS": "true",
            ], bound: Self.bound) { line in
                print("browser: \(line)")
                return nil
            }
            #expect(!run.timedOut, "the journey did not end within \(Self.bound), so it was ended")
            #expect(Self.failure(status: run.status, output: run.output) == nil, "the admin console's journey failed (exit \(run.status)); screenshots in \(screenshots):\n\(run.output.suffix(12_000))")
            // What the browser did went through the admin API: the console's sign-ins are in the audit log, and Bob is gone.
            let audit = try await operators.audit(KontoAuditQuery(type: "admin.operatorAuthorize", limit: 100)).entries
            #expect(audit.contains { $0.facts["action"] == "console.signIn" && $0.facts["outcome"] == "ok" })
            await #expect(throws: KontoClientError.self) { try await operators.account(bob.session.accountId) }
        }
    }

    /// The browser's Python and driver, the journey script, and an empty folder `.build/<screenshots>`; nil (an issue
    /// recorded) when the browser is missing on CI.
    static func prepare(screenshots folder: String) throws -> (python: String, chromedriver: String, script: String, screenshots: String)? {
        guard let python, let chromedriver else {
            Issue.record("CI is set, but KONTO_BROWSER_PYTHON or KONTO_CHROMEDRIVER is not: CI runs the tests through scripts/test.sh, which installs the browser and sets them")
            return nil
        }
        let script = try EndToEndSystem.repositoryFile("Tests/Browser/console_journey.py")
        let root = URL(fileURLWithPath: try EndToEndSystem.repositoryFile("Package.swift")).deletingLastPathComponent()
        let screenshots = root.appendingPathComponent(".build/\(folder)").path
        try? FileManager.default.removeItem(atPath: screenshots)
        try FileManager.default.createDirectory(atPath: screenshots, withIntermediateDirectories: true)
        return (python, chromedriver, script, screenshots)
    }

    /// nil when the script ended well; else its last step and its `failure:` line, on one line. A check on this value
    /// prints it beside the failed expectation, which is all of a failure that CI's summary keeps (the script's
    /// whole output is in the expectation's comment, on lines of their own).
    static func failure(status: Int32, output: String) -> String? {
        guard status != 0 else { return nil }
        let lines = output.split(separator: "\n")
        let lastStep = lines.last { $0.contains("step: [") }.map { String($0.drop { $0 != "[" }) } ?? "before the first step"
        let reason = lines.last { $0.contains("failure: ") }.map { String($0[$0.range(of: "failure: ")!.upperBound...]) } ?? "no failure line"
        return "exit \(status) in \(lastStep): \(reason)"
    }

    /// The first mail with `subject` the catcher received for `userId`.
    static func mail(to userId: String, subject: String, catcher: MailCatcher) async -> MailCatcher.Mail? {
        var count = 1
        while count <= 20 {
            let mails = await catcher.waitForMails(count, within: .seconds(20))
            if let mail = mails.first(where: { $0.to == [userId] && $0.subject == subject }) {
                return mail
            }
            guard mails.count >= count else { return nil }
            count = mails.count + 1
        }
        return nil
    }

    @Test(
        "passkeys in the console with Chromium's virtual authenticator: add, confirm with, sign in alone, as the second factor, recovery code, remove",
        .enabled(if: (python != nil && chromedriver != nil) || onCI, "KONTO_BROWSER_PYTHON and KONTO_CHROMEDRIVER are not set (scripts/test.sh sets them)")
    )
    func passkeys() async throws {
        guard let (python, chromedriver, script, screenshots) = try Self.prepare(screenshots: "console-screenshots-passkeys") else { return }
        // The production window: the journey confirms with the passkey once, then uses the window it opened.
        try await EndToEndSystem.with { system in
            // WebAuthn works on localhost, not on 127.0.0.1: the stack's Identity allows http://localhost:PORT.
            let url = system.gatewayURL.replacingOccurrences(of: "127.0.0.1", with: "localhost")
            let run = try await ConversingProcess.run(python, ["-u", script], environment: [
                "KONTO_GATEWAY_URL": url,
                "KONTO_SCREENSHOTS": screenshots,
                "KONTO_CHROMEDRIVER": chromedriver,
                "KONTO_JOURNEY": "passkeys",
                "PYTHONUNBUFFERED": "1",
                "SE_OFFLINE": "true",
                "SE_AVOID_STATS": "true",
            ], bound: Self.bound) { line in
                print("browser: \(line)")
                return nil
            }
            #expect(!run.timedOut, "the passkey journey did not end within \(Self.bound), so it was ended")
            #expect(Self.failure(status: run.status, output: run.output) == nil, "the passkey journey failed (exit \(run.status)); screenshots in \(screenshots):\n\(run.output.suffix(12_000))")
        }
    }
}

import Foundation
import KontoClient
import KontoTestSupport
import Testing

/// Mail over the whole system: the four executables on PostgreSQL, Notifications' courier sending to a real SMTP
/// server (aiosmtpd, KontoTestSupport's MailCatcher), every mail read by Python's `email` package.
@Suite("End to end: mail", .serialized, .timeLimit(.minutes(4)))
struct MailTests {
    static let enabled = MailCatcher.python != nil || ProcessInfo.processInfo.environment["CI"] != nil

    static func withMailSystem(mode: String = "plain", environment: [String: String] = [:], _ body: (EndToEndSystem, MailCatcher) async throws -> Void) async throws {
        let catcher = try await MailCatcher.start(mode: mode)
        do {
            try await EndToEndSystem.with(environment: [
                "KONTO_MAIL_SMTP_URL": "smtp://127.0.0.1:\(catcher.port)?tls=none",
                "KONTO_MAIL_FROM": "Konto <accounts@example.org>",
            ].merging(environment) { $1 }) { system in
                try await body(system, catcher)
            }
        } catch {
            await catcher.stop()
            throw error
        }
        await catcher.stop()
    }

    /// The reset mail's token, after its link was checked to lead to the console's page on this gateway.
    static func resetToken(in mail: MailCatcher.Mail, system: EndToEndSystem, http: RawHTTP) async throws -> String {
        let link = try #require(mail.link(containing: "/account/reset/confirm"), "\(mail.text ?? "")")
        let prefix = system.gatewayURL + "/account/reset/confirm?token="
        #expect(link.hasPrefix(prefix))
        let page = try await http.send("GET", String(link.dropFirst(system.gatewayURL.count)))
        #expect(page.status == 200 && String(decoding: page.body, as: UTF8.self).contains("reset-confirm-form"))
        return String(link.dropFirst(prefix.count))
    }

    @Test("a reset by mail end to end: the mail arrives correct, its link opens the console's page, its token sets the password, and a notice of the change follows",
          .enabled(if: enabled, "KONTO_AIOSMTPD_PYTHON is not set (scripts/test.sh sets it)"))
    func resetByMail() async throws {
        try #require(MailCatcher.python != nil, "CI is set, but KONTO_AIOSMTPD_PYTHON is not")
        try await Self.withMailSystem { system, catcher in
            let http = RawHTTP(system: system)
            _ = try await http.signUp(userId: "ada@example.org", password: "analytical engine 1843")
            // Sign-up's own mail first: the link that confirms the address.
            let verification = try #require(await catcher.waitForMails(1).first)
            #expect(verification.subject == "Confirm your email address" && verification.defects.isEmpty)
            #expect(verification.link(containing: "/account/verify?token=")?.hasPrefix(system.gatewayURL) == true)
            #expect(try await http.send("POST", "/v1/password-resets", json: ["userId": "ada@example.org"]).status == 202)
            let mails = await catcher.waitForMails(2)
            let mail = try #require(mails.last)
            #expect(mail.to == ["ada@example.org"] && mail.subject == "Reset your password" && mail.defects.isEmpty)
            let token = try await Self.resetToken(in: mail, system: system, http: http)
            #expect(try await http.send("POST", "/v1/password-resets/confirm", json: ["token": token, "newPassword": "difference engine 1822"]).status == 204)
            #expect(try await http.send("POST", "/v1/sessions", json: ["userId": "ada@example.org", "password": "difference engine 1822"]).status == 200)
            let notice = await catcher.waitForMails(3)
            #expect(notice.count == 3 && notice.last?.subject == "Your password was changed", "\(notice.map(\.subject))")
        }
    }

    @Test("an address verified by mail: the link opens the console's page, `konto verify-email --token` confirms it once, and a verified account's request sends nothing",
          .enabled(if: enabled, "KONTO_AIOSMTPD_PYTHON is not set (scripts/test.sh sets it)"))
    func verificationByMail() async throws {
        try #require(MailCatcher.python != nil, "CI is set, but KONTO_AIOSMTPD_PYTHON is not")
        try await Self.withMailSystem { system, catcher in
            let http = RawHTTP(system: system)
            let sessionFile = FileManager.default.temporaryDirectory.appendingPathComponent("konto-mail-\(UUID().uuidString).json").path
            defer { try? FileManager.default.removeItem(atPath: sessionFile) }
            let environment = ["KONTO_GATEWAY": system.gatewayURL, "KONTO_SESSION_FILE": sessionFile]
            let konto = try ServiceProcess.executable(named: "konto")
            // The owner signs up with the command, which keeps the session: the confirmation below presents it, so the
            // proof is the owner's and ends nothing (docs/IDENTITY.md, "Pre-hijacked accounts").
            let signedUp = try await ServiceProcess.run(konto, arguments: ["signup", "vera@example.org", "name=Vera Rubin", "handle=vera"], environment: environment, input: "analytical engine 1843\n")
            #expect(signedUp.status == 0, "\(signedUp.standardError)")
            let mail = try #require(await catcher.waitForMails(1).first)
            #expect(mail.subject == "Confirm your email address" && mail.to == ["vera@example.org"] && mail.defects.isEmpty)
            let link = try #require(mail.link(containing: "/account/verify?token="))
            let page = try await http.send("GET", String(link.dropFirst(system.gatewayURL.count)))
            // Opened without a session: the page offers to sign in to confirm (or to secure the account), never confirms.
            #expect(page.status == 200 && String(decoding: page.body, as: UTF8.self).contains("verify-sign-in-form"))
            let token = String(try #require(link.split(separator: "=", maxSplits: 1).last))
            let confirmed = try await ServiceProcess.run(konto, arguments: ["verify-email", "--token", token], environment: environment)
            #expect(confirmed.status == 0 && confirmed.standardOutput.contains("Email address confirmed."), "\(confirmed.standardError)")
            let again = try await ServiceProcess.run(konto, arguments: ["verify-email", "--token", token], environment: environment)
            #expect(again.status == 1 && again.standardError.contains("invalid, used or expired"), "\(again.standardError)")
            // Verified: asking again through KontoClient is accepted and sends nothing (the next mail is the reset's).
            let client = system.client()
            _ = try await client.logIn(userId: "vera@example.org", password: "analytical engine 1843")
            try await client.requestEmailVerification()
            #expect(try await http.send("POST", "/v1/password-resets", json: ["userId": "vera@example.org"]).status == 202)
            let mails = await catcher.waitForMails(2)
            #expect(mails.map(\.subject) == ["Confirm your email address", "Reset your password"])
        }
    }

    @Test("the verification mail's code end to end: the real mail carries the link and 8 digits; `konto verify-email --code` confirms it with the session the sign-up kept, which stays, as the password does",
          .enabled(if: enabled, "KONTO_AIOSMTPD_PYTHON is not set (scripts/test.sh sets it)"))
    func verificationByCode() async throws {
        try #require(MailCatcher.python != nil, "CI is set, but KONTO_AIOSMTPD_PYTHON is not")
        try await Self.withMailSystem { system, catcher in
            let http = RawHTTP(system: system)
            let sessionFile = FileManager.default.temporaryDirectory.appendingPathComponent("konto-verify-code-\(UUID().uuidString).json").path
            defer { try? FileManager.default.removeItem(atPath: sessionFile) }
            let environment = ["KONTO_GATEWAY": system.gatewayURL, "KONTO_SESSION_FILE": sessionFile]
            let konto = try ServiceProcess.executable(named: "konto")
            let signedUp = try await ServiceProcess.run(konto, arguments: ["signup", "emmy@example.org", "name=Emmy Noether", "handle=emmy"], environment: environment, input: "invariant theory 1918\n")
            #expect(signedUp.status == 0, "\(signedUp.standardError)")
            let mail = try #require(await catcher.waitForMails(1).first)
            #expect(mail.subject == "Confirm your email address" && mail.defects.isEmpty)
            #expect(mail.link(containing: "/account/verify?token=") != nil)
            let code = String(try #require(mail.text?.firstMatch(of: /\b[0-9]{8}\b/), "the text part shows the code").output)
            #expect(mail.html?.contains(code) == true, "the HTML part shows it too")
            let wrong = try await ServiceProcess.run(konto, arguments: ["verify-email", "--code", code == "00000000" ? "00000001" : "00000000"], environment: environment)
            #expect(wrong.status == 1 && wrong.standardError.contains("invalid, used or expired"), "\(wrong.standardError)")
            let both = try await ServiceProcess.run(konto, arguments: ["verify-email", "--code", code, "--token", "x"], environment: environment)
            #expect(both.status != 0 && both.standardError.contains("not both"), "\(both.standardError)")
            let confirmed = try await ServiceProcess.run(konto, arguments: ["verify-email", "--code", code], environment: environment)
            #expect(confirmed.status == 0 && confirmed.standardOutput.contains("Email address confirmed."), "\(confirmed.standardError)")
            // The command's session is still the account's, and the password still signs in.
            let whoami = try await ServiceProcess.run(konto, arguments: ["whoami"], environment: environment)
            #expect(whoami.status == 0 && whoami.standardOutput.contains("emmy@example.org"), "\(whoami.standardOutput) \(whoami.standardError)")
            #expect(try await http.send("POST", "/v1/sessions", json: ["userId": "emmy@example.org", "password": "invariant theory 1918"]).status == 200)
        }
    }

    @Test("sign-in by emailed code end to end: the code arrives by mail, `konto login --email-code` signs in with it (an earlier code still works after a later one is sent), and the address is verified by it",
          .enabled(if: enabled, "KONTO_AIOSMTPD_PYTHON is not set (scripts/test.sh sets it)"))
    func codeSignIn() async throws {
        try #require(MailCatcher.python != nil, "CI is set, but KONTO_AIOSMTPD_PYTHON is not")
        try await Self.withMailSystem(environment: ["KONTO_IDENTITY_EMAIL_CODE_LOGIN": "true"]) { system, catcher in
            let http = RawHTTP(system: system)
            _ = try await http.signUp(userId: "cody@example.org", password: "analytical engine 1843")
            _ = await catcher.waitForMails(1)
            #expect(try await http.send("POST", "/v1/sessions/email-code", json: ["userId": "cody@example.org"]).status == 202)
            let mail = try #require(await catcher.waitForMails(2).last)
            #expect(mail.subject == "Your sign-in code" && mail.to == ["cody@example.org"] && mail.defects.isEmpty)
            let code = String(try #require(mail.text?.firstMatch(of: /\b[0-9]{8}\b/)).output)
            let sessionFile = FileManager.default.temporaryDirectory.appendingPathComponent("konto-code-\(UUID().uuidString).json").path
            defer { try? FileManager.default.removeItem(atPath: sessionFile) }
            let environment = ["KONTO_GATEWAY": system.gatewayURL, "KONTO_SESSION_FILE": sessionFile]
            let konto = try ServiceProcess.executable(named: "konto")
            // `konto login --email-code` asks for a code of its own first; the one mailed before still works.
            let login = try await ServiceProcess.run(konto, arguments: ["login", "--email-code", "cody@example.org"], environment: environment, input: code + "\n")
            #expect(login.status == 0 && login.standardOutput.contains("Logged in as cody@example.org"), "\(login.standardError)")
            // Its own code's mail, and the mail saying what the first proof ended (in either order: separate mails).
            let afterLogin = await catcher.waitForMails(4)
            #expect(afterLogin.filter { $0.subject == "Your sign-in code" }.count == 2, "\(afterLogin.map(\.subject))")
            #expect(afterLogin.contains { $0.subject == "Your address is confirmed; what was set up before is gone" }, "\(afterLogin.map(\.subject))")
            let whoami = try await ServiceProcess.run(konto, arguments: ["whoami", "--json"], environment: environment)
            #expect(whoami.status == 0 && whoami.standardOutput.contains("cody@example.org"), "\(whoami.standardError)")
            let again = try await ServiceProcess.run(konto, arguments: ["login", "--email-code", "cody@example.org"], environment: environment, input: code + "\n")
            #expect(again.status == 1, "a code signs in once: \(again.standardOutput)")
            let shown = try await ServiceProcess.run(konto, arguments: ["account", "show", "--json"], environment: environment)
            #expect(shown.standardOutput.contains(/"emailVerified"\s*:\s*true/), "\(shown.standardOutput) \(shown.standardError)")
            // The code was the address's first proof: the password set at sign-up, before it, signs in no more (the
            // owner chooses one).
            #expect(try await http.send("POST", "/v1/sessions", json: ["userId": "cody@example.org", "password": "analytical engine 1843"]).status == 401)
        }
    }

    @Test("a courier killed mid-send delivers once the system recovers: the same mail, its link still working",
          .enabled(if: enabled, "KONTO_AIOSMTPD_PYTHON is not set (scripts/test.sh sets it)"))
    func killedMidSend() async throws {
        try #require(MailCatcher.python != nil, "CI is set, but KONTO_AIOSMTPD_PYTHON is not")
        // The server holds the first attempt's DATA unanswered; a claim outlasts two SMTP timeouts and 5 s (9 s).
        try await Self.withMailSystem(mode: "hold", environment: ["KONTO_MAIL_TIMEOUT_SECONDS": "2", "KONTO_NOTIFICATIONS_VISIBILITY_SECONDS": "1"]) { system, catcher in
            let http = RawHTTP(system: system)
            _ = try await http.signUp(userId: "bob@example.org", password: "analytical engine 1843")
            #expect(try await http.send("POST", "/v1/password-resets", json: ["userId": "bob@example.org"]).status == 202)
            // Both mails (sign-up's verification, the reset) are held in their first attempt.
            let held = await catcher.waitForHeld(2)
            try #require(held.count == 2, "the first attempts never reached the server: \(held)")
            await system.stack.kill("konto-notifications")
            try system.stack.restart("konto-notifications")
            try await system.waitUntilReady()
            let mails = await catcher.waitForMails(2, within: .seconds(60))
            #expect(Set(mails.map(\.messageId)) == Set(held))
            let mail = try #require(mails.first { $0.subject == "Reset your password" }, "no reset mail after the restart")
            let token = try await Self.resetToken(in: mail, system: system, http: http)
            #expect(try await http.send("POST", "/v1/password-resets/confirm", json: ["token": token, "newPassword": "difference engine 1822"]).status == 204)
        }
    }
}

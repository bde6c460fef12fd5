import Foundation
import KontoClient
import KontoModel
import KontoStack
import KontoTesting
import Logging
import ServiceLifecycle
import Synchronization
import Testing

/// The dev stack without a mail server: each mail's link or code is shown (the terminal, in `konto stack`), its links
/// point into the console wherever `KONTO_GATEWAY_CONSOLE_PATH` puts it, and the console says where the mail went.
@Suite("Dev stack mail", .timeLimit(.minutes(2)))
struct DevStackMailTests {
    @Test("a reset asked for in the console is shown with its link under the console's path, and the link resets the password", arguments: [nil, "/konto/console"])
    func resetLinkShown(consolePath: String?) async throws {
        let mails = Mutex<[DevStack.Mail]>([])
        var configuration = DevStack.Configuration()
        configuration.environment["KONTO_GATEWAY_UPSTREAM_TIMEOUT_MS"] = "30000"
        if let consolePath { configuration.environment["KONTO_GATEWAY_CONSOLE_PATH"] = consolePath }
        configuration.gatewayPort = try FreePort.loopback()
        configuration.identityPort = try FreePort.loopback()
        configuration.profilePort = try FreePort.loopback()
        configuration.notificationsPort = try FreePort.loopback()
        configuration.showMail = { mail in mails.withLock { $0.append(mail) } }
        let base = consolePath ?? "/account"
        try await Self.with(configuration) { gatewayURL in
            let client = KontoClient(gatewayURL: gatewayURL)
            var details = AccountDetails()
            details[\.name] = PersonName(givenName: "Ada")
            try await client.signUp(userId: "ada@example.org", password: "correct horse battery", details: details)
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gatewayURL, http: http)
                _ = try await browser.get(base + "/reset")
                let requested = try await browser.post(base + "/reset", [("userId", "ada@example.org")])
                #expect(requested.html.contains(#"<main id="reset-requested">"#), "\(requested.html)")
                #expect(requested.html.contains("No mail server is configured: konto stack shows each mail&#39;s link or code in its terminal instead."), "\(requested.html)")
            }
            // The sign-up's verification mail, then the reset's.
            let prefix = "http://localhost:\(configuration.gatewayPort)\(base)/reset/confirm?token="
            let deadline = ContinuousClock.now + .seconds(30)
            while !mails.withLock({ $0.contains { $0.link?.hasPrefix(prefix) == true } }), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            let shown = mails.withLock { $0 }
            #expect(shown.allSatisfy { $0.to == "ada@example.org" })
            #expect(shown.contains { $0.link?.hasPrefix("http://localhost:\(configuration.gatewayPort)\(base)/verify?token=") == true }, "\(shown)")
            let link = try #require(shown.compactMap(\.link).first { $0.hasPrefix(prefix) }, "\(shown)")
            try await client.confirmPasswordReset(token: String(link.dropFirst(prefix.count)), newPassword: "a new battery staple")
            try await client.logIn(userId: "ada@example.org", password: "a new battery staple")
        }
    }

    static func with(_ configuration: DevStack.Configuration, _ body: (String) async throws -> Void) async throws {
        let logger = Logger(label: "konto.test-stack", factory: { _ in SwiftLogNoOpLogHandler() })
        let stack = try DevStack(configuration: configuration, logger: logger)
        let group = stack.serviceGroup(logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            do {
                let address = try await stack.gatewayAddress()
                try await body("http://\(address.host):\(address.port)")
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
        }
    }
}

import Foundation
import KontoTestSupport
import NIOCore
import NIOSSL
@testable import KontoMail
import Testing

/// The SMTP client against a real SMTP server (PyPI's aiosmtpd, Tests/Mail/smtp_server.py): a plain catcher; STARTTLS
/// with a certificate the test makes, and AUTH; refusals sorted as the courier needs (550: never, 451: later).
/// scripts/test.sh installs aiosmtpd and names its Python in KONTO_AIOSMTPD_PYTHON; without it the tests are
/// skipped, except on CI, which always runs through scripts/test.sh.
@Suite("Mail: SMTP against aiosmtpd", .timeLimit(.minutes(2)))
struct SMTPClientTests {
    static let python = ProcessInfo.processInfo.environment["KONTO_AIOSMTPD_PYTHON"]
    static let onCI = ProcessInfo.processInfo.environment["CI"] != nil

    static func message(subject: String = "Reset your password") throws -> MailMessage {
        MailMessage(
            from: try MailAddress("accounts@example.org"), fromName: "Konto", to: try MailAddress("ada@example.org"), subject: subject,
            text: "Open https://example.org/account/reset/confirm?token=abc\n.\n", html: "<p>Open the link.</p>",
            messageId: "<test-1@example.org>", date: Date(timeIntervalSince1970: 1_790_000_000)
        )
    }

    /// Runs the server in `mode` (KontoTestSupport's MailCatcher), sends with `configure`d settings, and answers what
    /// the server received and the send's error.
    static func exchange(
        mode: String, certificate: (cert: String, key: String)? = nil, _ configure: (inout SMTPClient.Configuration) -> Void = { _ in }
    ) async throws -> (received: [MailCatcher.Mail], error: MailError?) {
        let mail = try message()
        let catcher = try await MailCatcher.start(mode: mode, certificate: certificate)
        var configuration = SMTPClient.Configuration(host: "localhost", port: catcher.port, security: mode == "starttls" ? .startTLS : .none)
        configure(&configuration)
        let client: SMTPClient
        do {
            client = try SMTPClient(configuration: configuration)
        } catch {
            await catcher.stop()
            throw error
        }
        var failure: MailError?
        do throws(MailError) {
            try await client.send(mail)
        } catch {
            failure = error
        }
        // The server writes a mail down before it answers its DATA: whatever was accepted is there now.
        let received = catcher.mails
        await catcher.stop()
        return (received, failure)
    }

    /// A self-signed certificate for localhost, made with openssl.
    static func certificate(in directory: URL) async throws -> (cert: String, key: String) {
        let cert = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let made = try await ServiceProcess.run("/usr/bin/openssl", arguments: [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert,
            "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ])
        #expect(made.status == 0, "\(made.standardError)")
        return (cert, key)
    }

    @Test("a plain catcher receives the mail as rendered, dot-stuffing undone", .enabled(if: python != nil || onCI, "KONTO_AIOSMTPD_PYTHON is not set (scripts/test.sh sets it)"))
    func plain() async throws {
        guard Self.python != nil else { Issue.record("CI is set, but KONTO_AIOSMTPD_PYTHON is not"); return }
        let (received, error) = try await Self.exchange(mode: "plain")
        #expect(error == nil, "\(String(describing: error))")
        let mail = try #require(received.first)
        #expect(mail.from == "accounts@example.org" && mail.to == ["ada@example.org"] && !mail.tls)
        #expect(mail.data.replacingOccurrences(of: "\r\n", with: "\n") == String(decoding: try Self.message().rendered(boundary: Self.boundary(of: mail.data)), as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n"))
    }

    @Test("a session carries one mail after another: up to its share of mails, as many idle at once as configured; none kept when none may be",
          .enabled(if: python != nil || onCI, "KONTO_AIOSMTPD_PYTHON is not set (scripts/test.sh sets it)"))
    func reuse() async throws {
        guard Self.python != nil else { Issue.record("CI is set, but KONTO_AIOSMTPD_PYTHON is not"); return }
        let catcher = try await MailCatcher.start(mode: "plain")
        do {
            var configuration = SMTPClient.Configuration(host: "127.0.0.1", port: catcher.port, security: .none)
            configuration.mailsPerConnection = 3
            let client = try SMTPClient(configuration: configuration)
            for _ in 0..<5 { try await client.send(try Self.message()) }
            let sequential = await catcher.waitForMails(5)
            #expect(sequential.count == 5)
            #expect(sequential.map(\.peerPort) == Array(repeating: sequential[0].peerPort, count: 3) + Array(repeating: sequential[3].peerPort, count: 2), "\(sequential.map(\.peerPort))")
            #expect(sequential[0].peerPort != sequential[3].peerPort)
            // Four at once: each its own session; afterwards the next mails find them waiting.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 { group.addTask { try await client.send(try Self.message()) } }
                try await group.waitForAll()
            }
            let concurrent = Set(await catcher.waitForMails(9).suffix(4).map(\.peerPort))
            #expect(concurrent.count >= 2, "four mails at once went over \(concurrent.count) connection(s)")
            for _ in 0..<4 { try await client.send(try Self.message()) }
            let after = await catcher.waitForMails(13).suffix(4).map(\.peerPort)
            #expect(Set(after).isSubset(of: concurrent.union([sequential[3].peerPort])), "the sessions kept were not reused: \(after) after \(concurrent)")
            await client.shutdown()

            configuration.maximumIdleConnections = 0
            let unpooled = try SMTPClient(configuration: configuration)
            for _ in 0..<3 { try await unpooled.send(try Self.message()) }
            #expect(Set(await catcher.waitForMails(16).suffix(3).map(\.peerPort)).count == 3)
        } catch {
            await catcher.stop()
            throw error
        }
        await catcher.stop()
    }

    @Test("STARTTLS with the test's certificate, then AUTH: delivered encrypted and authenticated; an untrusted certificate or wrong credentials are not (retried later)",
          .enabled(if: python != nil || onCI, "KONTO_AIOSMTPD_PYTHON is not set (scripts/test.sh sets it)"))
    func startTLS() async throws {
        guard Self.python != nil else { Issue.record("CI is set, but KONTO_AIOSMTPD_PYTHON is not"); return }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("konto-smtp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try await Self.certificate(in: directory)
        let trusted = { (configuration: inout SMTPClient.Configuration) in
            configuration.trustRoots = .file(certificate.cert)
            configuration.username = "konto"
            configuration.password = "s3cret"
        }
        let (received, error) = try await Self.exchange(mode: "starttls", certificate: certificate, trusted)
        #expect(error == nil, "\(String(describing: error))")
        #expect(received.first.map { $0.tls && $0.authenticated } == true)

        let untrusted = try await Self.exchange(mode: "starttls", certificate: certificate) { configuration in
            configuration.username = "konto"
            configuration.password = "s3cret"
        }
        #expect(untrusted.received.isEmpty && untrusted.error?.code == .transient, "\(String(describing: untrusted.error))")
        let wrongPassword = try await Self.exchange(mode: "starttls", certificate: certificate) { configuration in
            trusted(&configuration)
            configuration.password = "not it"
        }
        #expect(wrongPassword.received.isEmpty && wrongPassword.error?.code == .configuration && wrongPassword.error?.isPermanent == false, "\(String(describing: wrongPassword.error))")
    }

    @Test("550 to the recipient is permanent (a dead letter); 451 to the message is retried; nobody listening is retried",
          .enabled(if: python != nil || onCI, "KONTO_AIOSMTPD_PYTHON is not set (scripts/test.sh sets it)"))
    func refusals() async throws {
        guard Self.python != nil else { Issue.record("CI is set, but KONTO_AIOSMTPD_PYTHON is not"); return }
        let rejected = try await Self.exchange(mode: "reject-rcpt")
        #expect(rejected.error?.code == .permanent && rejected.error?.detail.contains("550") == true, "\(String(describing: rejected.error))")
        let later = try await Self.exchange(mode: "later")
        #expect(later.error?.code == .transient && later.error?.detail.contains("451") == true, "\(String(describing: later.error))")
        var nobody = SMTPClient.Configuration(host: "127.0.0.1", port: try FreePort.loopback(), security: .none)
        nobody.timeout = .seconds(5)
        await #expect(throws: MailError(.transient, "cannot connect to 127.0.0.1:\(nobody.port)")) { try await SMTPClient(configuration: nobody).send(try Self.message()) }
    }

    static func boundary(of data: String) throws -> String {
        let range = try #require(data.range(of: "boundary=\""))
        return String(data[range.upperBound...].prefix { $0 != "\"" })
    }
}

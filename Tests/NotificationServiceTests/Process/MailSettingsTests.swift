import Foundation
import KontoMail
import KontoRuntime
import Logging
import KontoModel
@testable import NotificationService
import Testing

@Suite("Mail settings from the environment")
struct MailSettingsTests {
    static let base = [
        "KONTO_WIRE_SECRET": "notifications-configuration-secret-0123456789",
        "KONTO_MAIL_FROM": "Example Accounts <accounts@example.org>",
        "KONTO_PUBLIC_URL": "https://accounts.example.org/",
    ]

    static func mail(_ variables: [String: String]) throws -> MailSettings? {
        try NotificationServiceConfiguration(environment: ServiceEnvironment(base.merging(variables) { _, given in given }), logger: Logger(label: "test")).mail
    }

    @Test("no SMTP URL: mail is off (the webhooks stay)")
    func off() throws {
        #expect(try Self.mail([:]) == nil)
    }

    @Test("smtp:// is STARTTLS on 587, smtps:// TLS on 465, ?tls=none a local catcher; credentials percent-decoded")
    func urls() throws {
        let startTLS = try #require(try Self.mail(["KONTO_MAIL_SMTP_URL": "smtp://konto%40example.org:p%3Ass%2Fw@mail.example.org"]))
        #expect(startTLS.smtp.host == "mail.example.org" && startTLS.smtp.port == 587 && startTLS.smtp.security == .startTLS)
        #expect(startTLS.smtp.username == "konto@example.org" && startTLS.smtp.password == "p:ss/w")
        #expect(startTLS.from.value == "accounts@example.org" && startTLS.fromName == "Example Accounts")
        #expect(startTLS.publicURL == "https://accounts.example.org" && startTLS.concurrency == 4)
        let implicit = try #require(try Self.mail(["KONTO_MAIL_SMTP_URL": "smtps://mail.example.org:2465", "KONTO_MAIL_CONCURRENCY": "8"]))
        #expect(implicit.smtp.port == 2465 && implicit.smtp.security == .implicitTLS && implicit.smtp.username == nil && implicit.concurrency == 8)
        let catcher = try #require(try Self.mail(["KONTO_MAIL_SMTP_URL": "smtp://localhost:1025?tls=none", "KONTO_MAIL_FROM": "konto@localhost.test"]))
        #expect(catcher.smtp.security == .none && catcher.smtp.port == 1025 && catcher.fromName == nil)
    }

    @Test("a bad setting stops the service naming its variable, never repeating a password", arguments: [
        ("KONTO_MAIL_SMTP_URL", "http://mail.example.org"),
        ("KONTO_MAIL_SMTP_URL", "smtp://"),
        ("KONTO_MAIL_SMTP_URL", "smtp://konto@mail.example.org"),
        ("KONTO_MAIL_SMTP_URL", "smtp://mail.example.org/path"),
        ("KONTO_MAIL_SMTP_URL", "smtps://mail.example.org?tls=none"),
        ("KONTO_MAIL_SMTP_URL", "smtp://mail.example.org?verify=no"),
        ("KONTO_MAIL_SMTP_URL", "smtp://u:Hunter2-secret@mail.example.org:99999"),
        ("KONTO_MAIL_FROM", "accounts"),
        ("KONTO_MAIL_FROM", "Accounts <a@example.org>\r\nBcc: eve@example.org"),
        ("KONTO_PUBLIC_URL", "accounts.example.org"),
        ("KONTO_PUBLIC_URL", "https://accounts.example.org/?x=1"),
        ("KONTO_MAIL_CONCURRENCY", "0"),
        ("KONTO_MAIL_SMTP_CA", "/nonexistent/ca.pem"),
        ("KONTO_MAIL_TEMPLATES", "/nonexistent/templates"),
    ])
    func refused(variable: String, value: String) {
        var variables = ["KONTO_MAIL_SMTP_URL": "smtp://mail.example.org"]
        variables[variable] = value
        #expect {
            try Self.mail(variables)
        } throws: { error in
            "\(error)".contains(variable) && !"\(error)".contains("Hunter2")
        }
    }

    @Test("the sender and the public URL are required once mail is on")
    func required() {
        for missing in ["KONTO_MAIL_FROM", "KONTO_PUBLIC_URL"] {
            var variables = Self.base.merging(["KONTO_MAIL_SMTP_URL": "smtp://mail.example.org"]) { $1 }
            variables[missing] = nil
            #expect {
                try NotificationServiceConfiguration(environment: ServiceEnvironment(variables), logger: Logger(label: "test"))
            } throws: { error in
                "\(error)".contains(missing)
            }
        }
    }

    @Test("a template directory: its files replace the built-in ones; an unknown file or a broken template is refused by name")
    func templates() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("konto-templates-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "Set a new password".write(to: directory.appendingPathComponent("passwordReset.subject.mustache"), atomically: true, encoding: .utf8)
        let settings = try #require(try Self.mail(["KONTO_MAIL_SMTP_URL": "smtp://mail.example.org", "KONTO_MAIL_TEMPLATES": directory.path]))
        let context = ["address": "ada@example.org", "link": "https://accounts.example.org/x"]
        #expect(settings.templates.render(.passwordReset, .subject, with: context) == "Set a new password")
        #expect(settings.templates.render(.passwordReset, .text, with: context) == MailTemplates.builtIn.render(.passwordReset, .text, with: context))
        for (file, text) in [("passwordReset.body.mustache", "x"), ("welcome.text.mustache", "x"), ("notes.txt", "x"), ("verifyEmail.html.mustache", "{{#open}}")] {
            let path = directory.appendingPathComponent(file)
            try text.write(to: path, atomically: true, encoding: .utf8)
            #expect {
                try Self.mail(["KONTO_MAIL_SMTP_URL": "smtp://mail.example.org", "KONTO_MAIL_TEMPLATES": directory.path])
            } throws: { error in
                "\(error)".contains("KONTO_MAIL_TEMPLATES") && "\(error)".contains(file)
            }
            try FileManager.default.removeItem(at: path)
        }
    }

    @Test("every built-in template compiles and renders what its message needs")
    func builtIn() throws {
        for message in MailRequest.Message.all {
            for part in MailTemplates.Part.allCases {
                #expect(MailTemplates.builtIn.render(message, part, with: ["address": "ada@example.org"])?.isEmpty == false, "\(message).\(part)")
            }
        }
    }
}

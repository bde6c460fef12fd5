import Foundation
import KontoMail
import KontoModel
import Mustache

/// The courier's templates (swift-mustache): a subject, a text and an HTML part per message. Built in, and each
/// overridable by a file in the operator's directory (`KONTO_MAIL_TEMPLATES`), named `<message>.<part>.mustache`
/// (e.g. `passwordReset.html.mustache`).
///
/// The subject and the text are plain text (`{{…}}` escapes nothing); the HTML part escapes every `{{…}}`. No value
/// can reach a header: the subject is encoded (``MIMEEncoding/headerValue(_:)``), its line breaks made spaces.
public struct MailTemplates: Sendable {
    public enum Part: String, Sendable, CaseIterable {
        case subject, text, html
    }

    /// A template that cannot be used, named.
    public struct Problem: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    private var templates: [String: MustacheTemplate]

    /// The template of `message`'s `part`; nil for a message no template knows (a newer producer's).
    func template(_ message: MailRequest.Message, _ part: Part) -> MustacheTemplate? {
        templates["\(message.rawValue).\(part.rawValue)"]
    }

    /// `message`'s `part` rendered with `context`; nil for a message no template knows.
    func render(_ message: MailRequest.Message, _ part: Part, with context: Any) -> String? {
        template(message, part)?.render(context)
    }

    /// Konto's own templates.
    public static let builtIn: MailTemplates = {
        do {
            return try MailTemplates(overrides: [:])
        } catch {
            // The built-in texts are compiled by the tests; they cannot fail here.
            preconditionFailure("\(error)")
        }
    }()

    /// The built-in templates with `overrides` (keyed `<message>.<part>`) in their place.
    init(overrides: [String: String]) throws(Problem) {
        var texts = Self.builtInTexts
        for (name, text) in overrides {
            guard texts[name] != nil else {
                throw Problem(description: "\(name).mustache overrides no template (a message of \(MailRequest.Message.all.map(\.rawValue).joined(separator: ", ")) and a part of subject, text, html)")
            }
            texts[name] = text
        }
        var templates: [String: MustacheTemplate] = [:]
        for (name, text) in texts {
            // Plain text but for the HTML part: a subject or text must not show `&amp;` for an `&`.
            let typed = name.hasSuffix(".html") ? text : "{{% CONTENT_TYPE: TEXT}}" + text
            do {
                templates[name] = try MustacheTemplate(string: typed)
            } catch {
                throw Problem(description: "\(name).mustache is not a Mustache template: \(error)")
            }
        }
        self.templates = templates
    }

    /// The built-in templates, each replaced by `<message>.<part>.mustache` in `directory` where there is one. Any
    /// other file there, or one that does not compile, is refused by name.
    public init(directory: String) throws(Problem) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw Problem(description: "\(directory) is not a readable directory")
        }
        var overrides: [String: String] = [:]
        for file in names.sorted() where !file.hasPrefix(".") {
            guard file.hasSuffix(".mustache") else {
                throw Problem(description: "\(file) is not a template (<message>.<part>.mustache)")
            }
            let path = (directory as NSString).appendingPathComponent(file)
            guard let data = FileManager.default.contents(atPath: path), data.count <= 256 * 1024,
                  let text = String(data: data, encoding: .utf8)
            else {
                throw Problem(description: "\(file) cannot be read as UTF-8 text of at most 256 KiB")
            }
            overrides[String(file.dropLast(".mustache".count))] = text
        }
        try self.init(overrides: overrides)
    }

    /// Konto's own texts, from `Resources/MailTemplates` (compiled in: `embedInCode`), named as overrides are.
    static let builtInTexts: [String: String] = [
        "accessSecured.html": String(decoding: PackageResources.accessSecured_html_mustache, as: UTF8.self),
        "accessSecured.subject": String(decoding: PackageResources.accessSecured_subject_mustache, as: UTF8.self),
        "accessSecured.text": String(decoding: PackageResources.accessSecured_text_mustache, as: UTF8.self),
        "emailChanged.html": String(decoding: PackageResources.emailChanged_html_mustache, as: UTF8.self),
        "emailChanged.subject": String(decoding: PackageResources.emailChanged_subject_mustache, as: UTF8.self),
        "emailChanged.text": String(decoding: PackageResources.emailChanged_text_mustache, as: UTF8.self),
        "factorAdded.html": String(decoding: PackageResources.factorAdded_html_mustache, as: UTF8.self),
        "factorAdded.subject": String(decoding: PackageResources.factorAdded_subject_mustache, as: UTF8.self),
        "factorAdded.text": String(decoding: PackageResources.factorAdded_text_mustache, as: UTF8.self),
        "factorRemoved.html": String(decoding: PackageResources.factorRemoved_html_mustache, as: UTF8.self),
        "factorRemoved.subject": String(decoding: PackageResources.factorRemoved_subject_mustache, as: UTF8.self),
        "factorRemoved.text": String(decoding: PackageResources.factorRemoved_text_mustache, as: UTF8.self),
        "identityLinked.html": String(decoding: PackageResources.identityLinked_html_mustache, as: UTF8.self),
        "identityLinked.subject": String(decoding: PackageResources.identityLinked_subject_mustache, as: UTF8.self),
        "identityLinked.text": String(decoding: PackageResources.identityLinked_text_mustache, as: UTF8.self),
        "newSignIn.html": String(decoding: PackageResources.newSignIn_html_mustache, as: UTF8.self),
        "newSignIn.subject": String(decoding: PackageResources.newSignIn_subject_mustache, as: UTF8.self),
        "newSignIn.text": String(decoding: PackageResources.newSignIn_text_mustache, as: UTF8.self),
        "passwordChanged.html": String(decoding: PackageResources.passwordChanged_html_mustache, as: UTF8.self),
        "passwordChanged.subject": String(decoding: PackageResources.passwordChanged_subject_mustache, as: UTF8.self),
        "passwordChanged.text": String(decoding: PackageResources.passwordChanged_text_mustache, as: UTF8.self),
        "passwordReset.html": String(decoding: PackageResources.passwordReset_html_mustache, as: UTF8.self),
        "passwordReset.subject": String(decoding: PackageResources.passwordReset_subject_mustache, as: UTF8.self),
        "passwordReset.text": String(decoding: PackageResources.passwordReset_text_mustache, as: UTF8.self),
        "recoveryCodeUsed.html": String(decoding: PackageResources.recoveryCodeUsed_html_mustache, as: UTF8.self),
        "recoveryCodeUsed.subject": String(decoding: PackageResources.recoveryCodeUsed_subject_mustache, as: UTF8.self),
        "recoveryCodeUsed.text": String(decoding: PackageResources.recoveryCodeUsed_text_mustache, as: UTF8.self),
        "secondFactorFailures.html": String(decoding: PackageResources.secondFactorFailures_html_mustache, as: UTF8.self),
        "secondFactorFailures.subject": String(decoding: PackageResources.secondFactorFailures_subject_mustache, as: UTF8.self),
        "secondFactorFailures.text": String(decoding: PackageResources.secondFactorFailures_text_mustache, as: UTF8.self),
        "secondFactorLocked.html": String(decoding: PackageResources.secondFactorLocked_html_mustache, as: UTF8.self),
        "secondFactorLocked.subject": String(decoding: PackageResources.secondFactorLocked_subject_mustache, as: UTF8.self),
        "secondFactorLocked.text": String(decoding: PackageResources.secondFactorLocked_text_mustache, as: UTF8.self),
        "signInCode.html": String(decoding: PackageResources.signInCode_html_mustache, as: UTF8.self),
        "signInCode.subject": String(decoding: PackageResources.signInCode_subject_mustache, as: UTF8.self),
        "signInCode.text": String(decoding: PackageResources.signInCode_text_mustache, as: UTF8.self),
        "verifyEmail.html": String(decoding: PackageResources.verifyEmail_html_mustache, as: UTF8.self),
        "verifyEmail.subject": String(decoding: PackageResources.verifyEmail_subject_mustache, as: UTF8.self),
        "verifyEmail.text": String(decoding: PackageResources.verifyEmail_text_mustache, as: UTF8.self),
    ]
}

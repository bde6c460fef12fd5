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

    static let builtInTexts: [String: String] = [
        "passwordReset.subject": "Reset your password",
        "passwordReset.text": """
        Someone asked to reset the password of your account {{address}}.

        Choose a new password here; the link works once, until {{expiresAt}}:
        {{link}}

        If it was not you, ignore this mail: your password stays as it is.

        """,
        "passwordReset.html": page("""
        <p>Someone asked to reset the password of your account {{address}}.</p>
        <p><a href="{{link}}">Choose a new password</a>. The link works once, until {{expiresAt}}.</p>
        <p>If it was not you, ignore this mail: your password stays as it is.</p>
        """),
        "verifyEmail.subject": "Confirm your email address",
        "verifyEmail.text": """
        Please confirm that {{address}} is your address:
        {{link}}

        The link works once, until {{expiresAt}}. If you did not ask for this, ignore this mail.

        """,
        "verifyEmail.html": page("""
        <p>Please confirm that {{address}} is your address.</p>
        <p><a href="{{link}}">Confirm my address</a>. The link works once, until {{expiresAt}}.</p>
        <p>If you did not ask for this, ignore this mail.</p>
        """),
        "signInCode.subject": "Your sign-in code",
        "signInCode.text": """
        Your code to sign in to {{address}}:

            {{code}}

        It works once, for {{minutes}} minutes. If you did not ask for it, ignore this mail; nobody can sign in without it.

        """,
        "signInCode.html": page("""
        <p>Your code to sign in to {{address}}:</p>
        <p style="font-size:1.5em;letter-spacing:0.2em"><strong>{{code}}</strong></p>
        <p>It works once, for {{minutes}} minutes. If you did not ask for it, ignore this mail; nobody can sign in without it.</p>
        """),
        "passwordChanged.subject": "Your password was changed",
        "passwordChanged.text": """
        The password of your account {{address}} was changed at {{time}}, and its other sessions were signed out.

        If it was not you, reset your password now: {{resetLink}}

        """,
        "passwordChanged.html": page("""
        <p>The password of your account {{address}} was changed at {{time}}, and its other sessions were signed out.</p>
        <p>If it was not you, <a href="{{resetLink}}">reset your password now</a>.</p>
        """),
        "emailChanged.subject": "Your email address was changed",
        "emailChanged.text": """
        Your account no longer signs in as {{address}}: its address was changed at {{time}}.

        If it was not you, reply to this mail or contact the service's support at once.

        """,
        "emailChanged.html": page("""
        <p>Your account no longer signs in as {{address}}: its address was changed at {{time}}.</p>
        <p>If it was not you, reply to this mail or contact the service's support at once.</p>
        """),
        "factorAdded.subject": "A second factor was added to your account",
        "factorAdded.text": """
        {{factor}} was added to your account {{address}} at {{time}} as a second factor.

        If it was not you, reset your password now: {{resetLink}}

        """,
        "factorAdded.html": page("""
        <p>{{factor}} was added to your account {{address}} at {{time}} as a second factor.</p>
        <p>If it was not you, <a href="{{resetLink}}">reset your password now</a>.</p>
        """),
        "factorRemoved.subject": "A second factor was removed from your account",
        "factorRemoved.text": """
        {{factor}} was removed from your account {{address}} at {{time}}.

        If it was not you, reset your password now: {{resetLink}}

        """,
        "factorRemoved.html": page("""
        <p>{{factor}} was removed from your account {{address}} at {{time}}.</p>
        <p>If it was not you, <a href="{{resetLink}}">reset your password now</a>.</p>
        """),
        "accessSecured.subject": "Your address is confirmed; what was set up before is gone",
        "accessSecured.text": """
        {{address}} was confirmed as your account's address at {{time}}, for the first time. So that nobody who
        set the account up with your address before you could confirm it can still use it, this was removed:
        {{removed}}.

        To sign in with a password, choose one here: {{resetLink}}

        """,
        "accessSecured.html": page("""
        <p>{{address}} was confirmed as your account's address at {{time}}, for the first time.</p>
        <p>So that nobody who set the account up with your address before you could confirm it can still use it, this
        was removed: {{removed}}.</p>
        <p>To sign in with a password, <a href="{{resetLink}}">choose one here</a>.</p>
        """),
        "secondFactorFailures.subject": "Someone who knows your password is trying codes",
        "secondFactorFailures.text": """
        {{failures}} wrong codes in a row were entered for your account {{address}}, the last at {{time}}, each after
        the right password. If it was not you, someone knows your password: change it now: {{resetLink}}

        """,
        "secondFactorFailures.html": page("""
        <p>{{failures}} wrong codes in a row were entered for your account {{address}}, the last at {{time}}, each after
        the right password.</p>
        <p>If it was not you, someone knows your password: <a href="{{resetLink}}">change it now</a>.</p>
        """),
        "secondFactorLocked.subject": "Your authenticator app's codes are locked",
        "secondFactorLocked.text": """
        After {{failures}} wrong codes in a row for your account {{address}} (the last at {{time}}), codes from your
        authenticator app are not accepted any more. To sign in, use one of your recovery codes or a passkey, or
        reset your password through this mail's address; that opens the app's codes again: {{resetLink}}

        Whoever entered the codes knew your password: if it was not you, reset it now.

        """,
        "secondFactorLocked.html": page("""
        <p>After {{failures}} wrong codes in a row for your account {{address}} (the last at {{time}}), codes from your
        authenticator app are not accepted any more.</p>
        <p>To sign in, use one of your recovery codes or a passkey, or <a href="{{resetLink}}">reset your password</a>;
        that opens the app's codes again.</p>
        <p>Whoever entered the codes knew your password: if it was not you, reset it now.</p>
        """),
        "identityLinked.subject": "A sign-in with {{provider}} was added to your account",
        "identityLinked.text": """
        Your account {{address}} can now be signed in to with {{provider}}, since {{time}}.{{#automatic}} It was linked
        because {{provider}} vouched for this address.{{/automatic}}

        If it was not you, reset your password now and remove the link in your account: {{resetLink}}

        """,
        "identityLinked.html": page("""
        <p>Your account {{address}} can now be signed in to with {{provider}}, since {{time}}.{{#automatic}} It was
        linked because {{provider}} vouched for this address.{{/automatic}}</p>
        <p>If it was not you, <a href="{{resetLink}}">reset your password now</a> and remove the link in your account.</p>
        """),
        "recoveryCodeUsed.subject": "A recovery code was used for your account",
        "recoveryCodeUsed.text": """
        A recovery code signed in to your account {{address}} at {{time}}; {{remaining}} are left. Each works once.

        If it was not you, reset your password now: {{resetLink}}

        """,
        "recoveryCodeUsed.html": page("""
        <p>A recovery code signed in to your account {{address}} at {{time}}; {{remaining}} are left. Each works once.</p>
        <p>If it was not you, <a href="{{resetLink}}">reset your password now</a>.</p>
        """),
        "newSignIn.subject": "A sign-in to your account from a new device or network",
        "newSignIn.text": """
        Your account {{address}} was signed in to with {{method}} at {{time}}, from a device or network it was not
        used from before.

        If it was you, there is nothing to do. If not, reset your password now: {{resetLink}}

        """,
        "newSignIn.html": page("""
        <p>Your account {{address}} was signed in to with {{method}} at {{time}}, from a device or network it was not
        used from before.</p>
        <p>If it was you, there is nothing to do. If not, <a href="{{resetLink}}">reset your password now</a>.</p>
        """),
    ]

    private static func page(_ body: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>{{subject}}</title></head>
        <body style="font-family:system-ui,sans-serif;line-height:1.5;max-width:40em">
        \(body)
        </body></html>

        """
    }
}

import Foundation
import KontoContracts
import KontoMail
import KontoModel
import Mustache

/// Makes the mail a `mailRequested` event asks for: opens its sealed secret, renders the message's templates, and
/// addresses it. Everything here is decided by the event alone, so a retry sends the same mail (the same
/// Message-ID and Date: a receiver can tell a repeat).
public struct MailComposer: Sendable {
    let settings: MailSettings
    let seal: ResetTokenSeal

    public init(settings: MailSettings, seal: ResetTokenSeal) {
        self.settings = settings
        self.seal = seal
    }

    /// What a template is rendered with; Mustache reads stored properties by name, and a nil renders nothing.
    struct Context {
        var subject: String?
        /// The recipient.
        var address: String
        /// The link the mail is for (reset, verification), with its token.
        var link: String?
        /// A sign-in code.
        var code: String?
        /// When the link or code stops working, and in how many minutes from the event.
        var expiresAt: String?
        var minutes: Int?
        /// When the change happened.
        var time: String
        /// A second factor, as people name it ("An authenticator app").
        var factor: String?
        /// What a first proof of the address removed, as a list people read (`accessSecured`).
        var removed: String?
        /// Wrong second-factor answers in a row (`secondFactorFailures`, `secondFactorLocked`).
        var failures: String?
        /// The provider of a linked identity, and whether Konto linked it by its verified address (`identityLinked`).
        var provider: String?
        var automatic: Bool?
        /// Recovery codes left (`recoveryCodeUsed`).
        var remaining: String?
        /// How a sign-in was made (`newSignIn`).
        var method: String?
        /// The console's page for resetting a password.
        var resetLink: String
        var publicURL: String
    }

    /// The mail; a ``MailError`` that is permanent when this event can never make one (an address Konto does not send
    /// to, a secret that does not open, a message no template knows).
    public func message(for event: AccountEvent, _ request: MailRequest) throws(MailError) -> MailMessage {
        let to = try MailAddress(request.to)
        var context = Context(
            address: to.value, time: Self.shown(event.time), resetLink: settings.publicURL + settings.consolePath + "/reset", publicURL: settings.publicURL
        )
        if let expiresAt = request.expiresAt {
            context.expiresAt = Self.shown(expiresAt)
            context.minutes = max(Int((expiresAt.timeIntervalSince(event.time) / 60).rounded()), 1)
        }
        if let sealed = request.sealedToken {
            let secret: String
            do {
                secret = try seal.open(sealed, accountId: event.accountId)
            } catch {
                throw MailError(.permanent, "the mail's secret does not open with this deployment's secret")
            }
            switch request.message {
            case .passwordReset: context.link = settings.publicURL + settings.consolePath + "/reset/confirm?token=" + Self.queryValue(secret)
            case .verifyEmail: context.link = settings.publicURL + settings.consolePath + "/verify?token=" + Self.queryValue(secret)
            default: context.code = secret
            }
        }
        // A verification mail's code, beside its link (mails asked for before codes were sent have none).
        if let sealed = request.sealedCode {
            do {
                context.code = try seal.open(sealed, accountId: event.accountId)
            } catch {
                throw MailError(.permanent, "the mail's secret does not open with this deployment's secret")
            }
        }
        context.factor = request.values["factorType"].map(Self.factorName)
        context.removed = request.values["removed"]
        context.failures = request.values["failures"].flatMap { Int($0) }.map(String.init)
        context.provider = request.values["provider"]
        context.automatic = request.values["automatic"] == "true" ? true : nil
        context.remaining = request.values["remaining"].flatMap { Int($0) }.map(String.init)
        context.method = request.values["method"]
        let templates = settings.templates
        guard let subject = templates.template(request.message, .subject), let text = templates.template(request.message, .text),
              let html = templates.template(request.message, .html)
        else {
            throw MailError(.permanent, "no template for the message \(request.message)")
        }
        context.subject = subject.render(context).trimmingCharacters(in: .whitespacesAndNewlines)
        var message = MailMessage(
            from: settings.from, fromName: settings.fromName, to: to, subject: context.subject ?? "",
            text: text.render(context), html: html.render(context),
            messageId: "<\(event.id.uuidString.lowercased())@\(settings.from.value.split(separator: "@").last ?? "konto.invalid")>",
            date: event.time
        )
        message.link = context.link
        message.code = context.code
        return message
    }

    /// A token as a query value (base64url and digits need no escaping; anything else is percent-encoded).
    static func queryValue(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_.~"))) ?? ""
    }

    static func factorName(_ type: String) -> String {
        switch type {
        case "totp": "An authenticator app"
        case "passkey": "A passkey"
        case "recoveryCodes": "A new set of recovery codes (any earlier ones stopped working)"
        default: "A second factor"
        }
    }

    /// `2026-11-26 08:15 UTC`.
    static func shown(_ date: Date) -> String {
        MIMEEncoding.utc(date, format: "yyyy-MM-dd HH:mm 'UTC'")
    }
}

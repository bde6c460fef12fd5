import GatewayService
import Mustache

/// The console's pages as Mustache templates (`Resources/Templates/*.mustache`), compiled into the gateway (no files
/// to ship beside the binary).
///
/// Every value is written with `{{…}}`, which escapes `& < > " '`; the unescaping forms (`{{{…}}}`, `{{&…}}`) are
/// never used (a test checks). Pages extend `layout` (template inheritance), so no HTML is passed around as a value.
enum ConsoleTemplates {
    static func library() throws -> MustacheLibrary {
        var library = MustacheLibrary()
        for (name, text) in all {
            try library.register(text, named: name)
        }
        return library
    }

    /// `page` rendered with `template`; empty if there is no such template.
    static func render(_ page: ConsolePage, template: String, in library: MustacheLibrary) -> String {
        library.render(page, withTemplate: template) ?? ""
    }

    /// The templates by name, from `Resources/Templates` (compiled in: `embedInCode`).
    static let all: [(String, String)] = [
        ("adminAccount", text(PackageResources.adminAccount_mustache)),
        ("adminAccountForm", text(PackageResources.adminAccountForm_mustache)),
        ("adminAccounts", text(PackageResources.adminAccounts_mustache)),
        ("adminAudit", text(PackageResources.adminAudit_mustache)),
        ("adminClients", text(PackageResources.adminClients_mustache)),
        ("adminDeliveries", text(PackageResources.adminDeliveries_mustache)),
        ("adminDone", text(PackageResources.adminDone_mustache)),
        ("adminImport", text(PackageResources.adminImport_mustache)),
        ("adminLayout", text(PackageResources.adminLayout_mustache)),
        ("adminProblem", text(PackageResources.adminProblem_mustache)),
        ("adminSignIn", text(PackageResources.adminSignIn_mustache)),
        ("adminWebhooks", text(PackageResources.adminWebhooks_mustache)),
        ("categories", text(PackageResources.categories_mustache)),
        ("codes", text(PackageResources.codes_mustache)),
        ("applications", text(PackageResources.applications_mustache)),
        ("consent", text(PackageResources.consent_mustache)),
        ("continue", text(PackageResources.continue_mustache)),
        ("csrf", text(PackageResources.csrf_mustache)),
        ("done", text(PackageResources.done_mustache)),
        ("edit", text(PackageResources.edit_mustache)),
        ("endSession", text(PackageResources.endSession_mustache)),
        ("export", text(PackageResources.export_mustache)),
        ("externalSignup", text(PackageResources.externalSignup_mustache)),
        ("factors", text(PackageResources.factors_mustache)),
        ("field", text(PackageResources.field_mustache)),
        ("form", text(PackageResources.form_mustache)),
        ("identities", text(PackageResources.identities_mustache)),
        ("layout", text(PackageResources.layout_mustache)),
        ("mail", text(PackageResources.mail_mustache)),
        ("messages", text(PackageResources.messages_mustache)),
        ("overview", text(PackageResources.overview_mustache)),
        ("passkey", text(PackageResources.passkey_mustache)),
        ("passkeyPage", text(PackageResources.passkeyPage_mustache)),
        ("problem", text(PackageResources.problem_mustache)),
        ("sessions", text(PackageResources.sessions_mustache)),
        ("setup", text(PackageResources.setup_mustache)),
        ("signup", text(PackageResources.signup_mustache)),
        ("totp", text(PackageResources.totp_mustache)),
        ("verify", text(PackageResources.verify_mustache)),
    ]

    static func text(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}

/// What a console template is rendered with. Mustache reads stored properties by name; a missing one renders
/// nothing, so each page sets only what it shows.
struct ConsolePage: Sendable {
    var title: String
    var base: String
    var csrf: String
    var notice: String?
    var formError: String?
    /// The userId as the pages name it: `email address` or `username`.
    var userIdNoun = ""
    /// Fields of a page's own (log in, a password, a reset).
    var fields: [ConsoleField] = []
    /// Fields of account keys, by category (sign up, edit).
    var categories: [ConsoleSchema.Category] = []
    /// Stored details, by category (overview).
    var shown: [ConsoleSchema.ShownCategory] = []
    var anonymous = false
    /// AccountSetup offers sign-in with a code by mail.
    var emailCode = false
    /// The providers offered on the setup page ("Continue with …").
    var providers: [ProviderLink] = []
    /// A sign-up through a provider waiting for values: its token and provider, sent back with the form.
    var externalSignUp: ExternalSignUp?

    struct ProviderLink: Sendable {
        var name: String
        var displayName: String
    }

    struct ExternalSignUp: Sendable {
        var token: String
        var provider: String
    }
    var isAnonymous = false
    /// The account's address awaits its confirmation: the overview offers a new link.
    var awaitsVerification = false
    /// The account version an edit is based on (its If-Match).
    var version: String?
    /// A page of one form of its own fields (``ConsoleTemplates/form``).
    var form: Form?
    /// A page that says what happened (``ConsoleTemplates/done``).
    var done: Done?
    /// The page a verification mail links to (``ConsoleTemplates/verify``).
    var verify: Verify?
    /// The second factors (``ConsoleTemplates/factors``).
    var factors: [FactorRow] = []
    var hasFactors = false
    /// A TOTP enrolment awaiting its first code (``ConsoleTemplates/totp``).
    var totp: TOTPEnrolment?
    /// New recovery codes, shown once (``ConsoleTemplates/codes``).
    var codes: [String] = []
    /// Where the page sends the browser on its own (a meta refresh), with a link to it (``ConsoleTemplates/continue``).
    var refreshURL: String?
    /// The applications page's rows (id, name, what it may do and since when).
    var applications: [IdentityRow] = []
    var hasApplications = false
    /// The consent page's application and what it asks for, in words.
    var consentClient: String?
    var consentScopes: [String] = []
    /// The sign-out confirmation's application (when known) and the logout request it carries back.
    var endSessionClient: String?
    var endSessionQuery: String?
    var continueLabel = ""
    /// The linked identities (``ConsoleTemplates/identities``); the providers to link are ``providers``.
    var identities: [IdentityRow] = []
    var hasIdentities = false
    /// The mail preferences (``ConsoleTemplates/mail``).
    var mailsNewSignIns = true
    /// Where the account is signed in (``ConsoleTemplates/sessions``).
    var sessions: [SessionRow] = []
    var hasOtherSessions = false
    /// A passkey ceremony the page offers (``ConsoleTemplates/passkey``).
    var passkey: Passkey?

    struct Passkey: Sendable {
        var formId: String
        var action: String
        /// `create` (a new passkey) or `get` (signing in or confirming with one).
        var ceremony: String
        /// WebAuthn's options as JSON (escaped into the attribute like every value).
        var options: String
        var named = false
        var buttonId: String
        var buttonClass = "secondary"
        var label: String
    }

    struct IdentityRow: Sendable {
        var id: String
        var provider: String
        var detail: String
    }

    struct SessionRow: Sendable {
        var id: String
        /// The browser or app as people name it, else what the client called itself.
        var device: String
        var detail: String
        var current: Bool
    }

    struct FactorRow: Sendable {
        var id: String
        var name: String
        var detail: String
    }

    struct TOTPEnrolment: Sendable {
        var factorId: String
        /// The otpauth URI's QR code as an SVG path and its extent in modules (quiet zone included); none on a retry.
        var hasQR: Bool
        var qrPath: String
        var qrExtent: Int
        var secret: String
        var uri: String
        var error: String?
    }

    struct Form: Sendable {
        var mainId: String
        var heading: String
        var intro: String?
        var formId: String
        var action: String
        var submitId: String
        var submitLabel: String
        var danger = false
        var cancels = true
        var backToLogin = false
        /// A token from an emailed link (a reset, a verification), sent back with the form.
        var hasToken = false
        var token = ""
    }

    struct Verify: Sendable {
        /// The link's token, sent back with each of the page's forms.
        var token: String
        /// Signed in: the page confirms with the session; else it offers to sign in first, or to secure the account.
        var signedIn: Bool
    }

    struct Done: Sendable {
        var mainId: String
        var heading: String
        var text: String
        var linkId: String
        var linkPath: String
        var linkLabel: String
    }

    init(title: String, base: String, csrf: String) {
        self.title = title
        self.base = base
        self.csrf = csrf
    }
}

extension ConsolePage.Form {
    /// A security-related step's page asking for the current password first (the window has shut): its form is
    /// `<formPrefix>-form` with `<formPrefix>-submit`; `token` carries the step's subject back (a session, an identity).
    static func currentPasswordFirst(
        mainId: String, formPrefix: String, heading: String, action: String, submitLabel: String, token: String? = nil
    ) -> ConsolePage.Form {
        ConsolePage.Form(
            mainId: mainId, heading: heading, intro: "For your security, enter your current password first.", formId: formPrefix + "-form",
            action: action, submitId: formPrefix + "-submit", submitLabel: submitLabel, hasToken: token != nil, token: token ?? ""
        )
    }
}

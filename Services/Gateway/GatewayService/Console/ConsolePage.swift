/// What a console template is rendered with. Mustache reads stored properties by name; a missing one renders
/// nothing, so each page sets only what it shows.
struct ConsolePage: Sendable {
    var title: String
    var base: String
    var csrf: String
    var notice: String?
    var formError: String?
    /// Fields of a page's own (log in, a password, a reset).
    var fields: [ConsoleField] = []
    /// Fields of account keys, by category (sign up, edit).
    var categories: [ConsoleSchema.Category] = []
    /// Stored details, by category (overview).
    var shown: [ConsoleSchema.ShownCategory] = []
    var anonymous = false
    var isAnonymous = false
    /// The account version an edit is based on (its If-Match).
    var version: String?
    /// A password reset's token, from the emailed link.
    var token: String?

    init(title: String, base: String, csrf: String) {
        self.title = title
        self.base = base
        self.csrf = csrf
    }
}

/// What an admin console template is rendered with (``AdminConsole``). Mustache reads stored properties by name; a
/// missing one renders nothing, so each page sets only what it shows. Every value is escaped by the templates.
struct AdminConsolePage: Sendable {
    var title: String
    var base: String
    var csrf: String
    var notice: String?
    var formError: String?
    /// The signed-in key: its name and id (nil on the sign-in page).
    var key: Key?

    struct Key: Sendable {
        var name: String
        var id: String
        var scopes: String
    }

    struct Pair: Sendable {
        var key: String
        var value: String
    }

    // Search.
    var query = ""
    var onlyDisabled = false
    var accounts: [AccountRow] = []
    var hasAccounts = false
    var total: String?
    var nextPage: String?

    struct AccountRow: Sendable {
        var id: String
        var userId: String
        var created: String
        var verified: Bool
        var disabled: Bool
        var anonymous: Bool
    }

    // One account.
    var account: Account?

    struct Account: Sendable {
        var id: String
        var userId: String
        var version: String
        var details: [Pair]
        var created: String
        var lastSignIn: String?
        var verified: String?
        var disabled: String?
        var hasPassword: Bool
        var factors: [Factor]
        var identities: [Identity]
        var sessions: [Session]
        var sessionCount: Int
    }

    struct Factor: Sendable {
        var id: String
        var kind: String
        var name: String?
        var created: String
    }

    struct Identity: Sendable {
        var id: String
        var provider: String
        var created: String
        var lastUsed: String?
    }

    struct Session: Sendable {
        var id: String
        var created: String
        var expires: String
        var level: Int
        var lastUsed: String
        /// How it signed in, from where (the client's network) and with what (its name).
        var client: String
    }

    // Audit trail (an account's, or the log's).
    var audit: [AuditRow] = []
    var hasAudit = false
    var auditType = ""
    var auditAccount = ""
    var auditNext: String?

    struct AuditRow: Sendable {
        var at: String
        var type: String
        var accountId: String?
        var actor: String
        var facts: String
        var erased: Bool
    }

    // Failed deliveries.
    var group = ""
    var deliveries: [Delivery] = []
    var hasDeliveries = false
    var listedGroup = false

    struct Delivery: Sendable {
        var eventId: String
        var type: String
        var accountId: String
        var attempts: Int
        var lastError: String
        var deadAt: String
    }

    // Making and changing an account.
    var accountForm: AccountForm?

    struct AccountForm: Sendable {
        /// The form's target under the console (`/accounts/new`, `/accounts/{id}/edit`).
        var action: String
        var accountId: String?
        var userId: String
        var details: String
        var remove: String
        var verified: Bool
        var version: String
        /// A new account: a password may be given.
        var new: Bool
    }

    // An import.
    var ndjson = ""
    var importReport: ImportReport?

    struct ImportReport: Sendable {
        var created: Int
        var failed: Int
        var lines: [ImportRow]
    }

    struct ImportRow: Sendable {
        var line: Int
        var accountId: String?
        var problem: String?
    }

    // Webhook endpoints.
    var webhooks: [WebhookRow] = []
    var hasWebhooks = false
    /// The secret made for an endpoint just added (or a client registered or given a new one), shown this once.
    var madeSecret: String?

    struct WebhookRow: Sendable {
        var name: String
        var url: String
        var types: String
        var fromFile: Bool
        var deliversResetTokens: Bool
    }

    // OpenID Provider clients.
    var clients: [ClientRow] = []
    var hasClients = false
    /// The registration form (or a client's change), with what was given when it was refused.
    var clientForm: ClientForm?

    struct ClientRow: Sendable {
        var id: String
        var name: String
        /// Its type, and a confidential one's authentication.
        var kind: String
        var fromFile: Bool
        var redirectURIs: [String]
        var postLogoutRedirectURIs: [String]
        var scopes: String
        var firstParty: Bool
        var created: String?
        /// Until when the secret before the last rotation is still accepted.
        var previousSecretUntil: String?
        /// Registered through the API with a secret Konto made: it can be given a new one.
        var rotatable: Bool
    }

    struct ClientForm: Sendable {
        /// The form's target under the console: `/clients/add`, or `/clients/update` for a change.
        var action = "/clients/add"
        /// A registered client's change: its id and type as registered, the list left out.
        var editing = false
        var id = ""
        var name = ""
        var types: [Option]
        /// A public client's change has no authentication to choose.
        var choosesAuthentication = true
        var authentications: [Option]
        /// Registering may give private_key_jwt keys; a change only a private_key_jwt client's.
        var takesKeys = true
        var jwks = ""
        var redirectURIs = ""
        var postLogoutRedirectURIs = ""
        var scopes: [Option]
        var firstParty = false
        var idTokenAlgorithms: [Option]
        var sectorIdentifier = ""
    }

    /// One choice of a select, or one checkbox (`selected`: checked).
    struct Option: Sendable {
        var value: String
        var label: String
        var selected: Bool
    }
}

import KontoModel

/// One parameter of an OAuth request as it came (a query's or a form's), duplicates kept so they can be refused.
public struct IdentityOpenIDParameter: Codable, Sendable, Equatable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// The authorization endpoint's request as the console forwards it (``IdentityContract/openIDAuthorize``).
public struct IdentityOpenIDAuthorizeRequest: Codable, Sendable, Equatable {
    /// The console's session; nil when the browser has none.
    public var token: BearerToken?
    /// The authorization request's query parameters.
    public var parameters: [IdentityOpenIDParameter]
    /// When the console first received this authorization request: `prompt=login` needs a sign-in after it.
    public var requestedAt: Timestamp
    /// The owner approved the request's scopes on the consent page just now (the console's CSRF-checked form).
    public var consentGiven: Bool
    /// The owner declined them there: `access_denied` goes back to the client.
    public var consentDenied: Bool?
    /// The browser's address, for the audit of a consent.
    public var clientAddress: String?

    public init(
        token: BearerToken?, parameters: [IdentityOpenIDParameter], requestedAt: Timestamp, consentGiven: Bool = false, consentDenied: Bool? = nil,
        clientAddress: String? = nil
    ) {
        self.token = token
        self.consentDenied = consentDenied
        self.parameters = parameters
        self.requestedAt = requestedAt
        self.consentGiven = consentGiven
        self.clientAddress = clientAddress
    }
}

/// What the console does next with an authorization request.
public struct IdentityOpenIDAuthorization: Codable, Sendable, Equatable {
    public enum Outcome: String, Codable, Sendable {
        /// Send the browser to ``location``: the client's redirect URI with a code, or with an error for the client.
        case redirect
        /// Sign in (again) first, then ask once more (``signIn`` says why).
        case signIn
        /// Show the consent page for ``client`` and ``scopes``.
        case consent
        /// The request cannot go back to its client (no such client, a redirect URI not registered): show
        /// ``error`` and ``errorDescription`` to the person, never redirect.
        case refused
    }

    public enum SignInReason: String, Codable, Sendable {
        /// No session, or `prompt=login`.
        case login
        /// The session's sign-in is older than `max_age`.
        case reauthenticate
        /// `acr_values=aal2` and the session has no second factor's proof while the account has a second factor.
        case secondFactor
    }

    public var outcome: Outcome
    public var location: String?
    public var signIn: SignInReason?
    public var client: IdentityOpenIDClientSummary?
    public var scopes: [String]?
    public var error: String?
    public var errorDescription: String?

    public init(
        outcome: Outcome, location: String? = nil, signIn: SignInReason? = nil, client: IdentityOpenIDClientSummary? = nil, scopes: [String]? = nil,
        error: String? = nil, errorDescription: String? = nil
    ) {
        self.outcome = outcome
        self.location = location
        self.signIn = signIn
        self.client = client
        self.scopes = scopes
        self.error = error
        self.errorDescription = errorDescription
    }

    public static func redirect(_ location: String) -> Self { Self(outcome: .redirect, location: location) }
    public static func signIn(_ reason: SignInReason) -> Self { Self(outcome: .signIn, signIn: reason) }
    public static func refused(_ error: String, _ description: String) -> Self { Self(outcome: .refused, error: error, errorDescription: description) }
}

/// A registered client as the owner sees it (the consent page, the account's connected applications).
public struct IdentityOpenIDClientSummary: Codable, Sendable, Equatable {
    public var id: String
    public var name: String

    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

/// How a client proves itself at the token, revocation and introspection endpoints, as the gateway read it.
public struct IdentityOpenIDClientCredentials: Codable, Sendable, CustomStringConvertible {
    /// From HTTP Basic (`client_secret_basic`), both parts form-urldecoded by the gateway.
    public var basicId: String?
    public var basicSecret: SecretString?
    /// From the form: `client_id`, `client_secret` (`client_secret_post`), `client_assertion_type` and
    /// `client_assertion` (`private_key_jwt`).
    public var clientId: String?
    public var clientSecret: SecretString?
    public var assertionType: String?
    public var assertion: SecretString?

    public init(
        basicId: String? = nil, basicSecret: SecretString? = nil, clientId: String? = nil, clientSecret: SecretString? = nil,
        assertionType: String? = nil, assertion: SecretString? = nil
    ) {
        self.basicId = basicId
        self.basicSecret = basicSecret
        self.clientId = clientId
        self.clientSecret = clientSecret
        self.assertionType = assertionType
        self.assertion = assertion
    }

    public var description: String { "IdentityOpenIDClientCredentials(clientId: \(basicId ?? clientId ?? "-"))" }
}

/// The token endpoint's request (``IdentityContract/openIDToken``): `authorization_code` or `refresh_token`.
public struct IdentityOpenIDTokenRequest: Codable, Sendable {
    public var client: IdentityOpenIDClientCredentials
    public var grantType: String?
    public var code: SecretString?
    public var redirectURI: String?
    public var codeVerifier: SecretString?
    public var refreshToken: SecretString?
    /// A narrower scope for a refreshed access token.
    public var scope: String?
    /// A form field given twice: refused as `invalid_request` (RFC 6749 3.2).
    public var duplicated: String?
    /// The client's address, for the audit.
    public var clientAddress: String?

    public init(
        client: IdentityOpenIDClientCredentials, grantType: String?, code: SecretString? = nil, redirectURI: String? = nil,
        codeVerifier: SecretString? = nil, refreshToken: SecretString? = nil, scope: String? = nil, duplicated: String? = nil, clientAddress: String? = nil
    ) {
        self.clientAddress = clientAddress
        self.client = client
        self.grantType = grantType
        self.code = code
        self.redirectURI = redirectURI
        self.codeVerifier = codeVerifier
        self.refreshToken = refreshToken
        self.scope = scope
        self.duplicated = duplicated
    }
}

/// An OAuth error the endpoint answers with (RFC 6749 5.2, RFC 6750 3.1): its code, a description for developers,
/// and the HTTP status.
public struct IdentityOpenIDError: Codable, Sendable, Equatable, Error {
    public var error: String
    public var description: String
    public var status: Int

    public init(_ error: String, _ description: String, status: Int = 400) {
        self.error = error
        self.description = description
        self.status = status
    }
}

/// The token endpoint's answer: the tokens, or the OAuth error.
public struct IdentityOpenIDTokenResponse: Codable, Sendable, Equatable {
    public var tokens: IdentityOpenIDTokens?
    public var error: IdentityOpenIDError?

    public init(tokens: IdentityOpenIDTokens) {
        self.tokens = tokens
        self.error = nil
    }

    public init(error: IdentityOpenIDError) {
        self.tokens = nil
        self.error = error
    }
}

/// RFC 6749 5.1's successful response, with OpenID Connect's `id_token`.
public struct IdentityOpenIDTokens: Codable, Sendable, Equatable, CustomStringConvertible {
    public var accessToken: BearerToken
    public var tokenType: String
    public var expiresIn: Int
    public var refreshToken: BearerToken?
    public var idToken: String?
    public var scope: String

    public init(accessToken: BearerToken, expiresIn: Int, refreshToken: BearerToken?, idToken: String?, scope: String) {
        self.accessToken = accessToken
        self.tokenType = "Bearer"
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.scope = scope
    }

    public var description: String { "IdentityOpenIDTokens(scope: \(scope), expiresIn: \(expiresIn))" }
}

/// An access token to check (``IdentityContract/openIDAccessToken``): the userinfo endpoint's, and Konto's API's.
public struct IdentityOpenIDAccessTokenRequest: Codable, Sendable, Equatable {
    public var token: BearerToken

    public init(token: BearerToken) {
        self.token = token
    }
}

/// What a valid access token grants: whose account, to which client, which scopes, and what userinfo says of the
/// address; or the error (`invalid_token`, 401).
public struct IdentityOpenIDAccessGrant: Codable, Sendable, Equatable {
    public var accountId: String?
    /// The `sub` the client knows the account by (public or pairwise).
    public var subject: String?
    public var clientId: String?
    public var scopes: [String]?
    public var expiresAt: Timestamp?
    /// The account's address and whether it was proven (the `email` scope's claims), where its userId is one.
    public var email: String?
    public var emailVerified: Bool?
    /// The account as Konto's API shows it (the gateway's `GET /v1/account` for an access token).
    public var account: IdentityAccountFacts?
    public var error: IdentityOpenIDError?

    public init(
        accountId: String?, subject: String?, clientId: String?, scopes: [String]?, expiresAt: Timestamp?, email: String? = nil,
        emailVerified: Bool? = nil, account: IdentityAccountFacts? = nil, error: IdentityOpenIDError? = nil
    ) {
        self.account = account
        self.accountId = accountId
        self.subject = subject
        self.clientId = clientId
        self.scopes = scopes
        self.expiresAt = expiresAt
        self.email = email
        self.emailVerified = emailVerified
        self.error = error
    }

    public init(error: IdentityOpenIDError) {
        self.init(accountId: nil, subject: nil, clientId: nil, scopes: nil, expiresAt: nil, error: error)
    }
}

/// RFC 7009 revocation and RFC 7662 introspection: a client's token about one of its own tokens.
public struct IdentityOpenIDTokenQuery: Codable, Sendable {
    public var client: IdentityOpenIDClientCredentials
    public var token: SecretString?
    /// `access_token` or `refresh_token`: where to look first (either is found).
    public var tokenTypeHint: String?
    /// The client's address, for the audit of a revocation.
    public var clientAddress: String?

    public init(client: IdentityOpenIDClientCredentials, token: SecretString?, tokenTypeHint: String? = nil, clientAddress: String? = nil) {
        self.clientAddress = clientAddress
        self.client = client
        self.token = token
        self.tokenTypeHint = tokenTypeHint
    }
}

/// RFC 7662 2.2's answer (or the client's error, `invalid_client`).
public struct IdentityOpenIDIntrospection: Codable, Sendable, Equatable {
    public var active: Bool
    public var scope: String?
    public var clientId: String?
    public var subject: String?
    public var tokenType: String?
    public var expiresAt: Timestamp?
    public var issuedAt: Timestamp?
    public var issuer: String?
    public var error: IdentityOpenIDError?

    public init(
        active: Bool, scope: String? = nil, clientId: String? = nil, subject: String? = nil, tokenType: String? = nil, expiresAt: Timestamp? = nil,
        issuedAt: Timestamp? = nil, issuer: String? = nil, error: IdentityOpenIDError? = nil
    ) {
        self.active = active
        self.scope = scope
        self.clientId = clientId
        self.subject = subject
        self.tokenType = tokenType
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
        self.issuer = issuer
        self.error = error
    }

    public static let inactive = Self(active: false)
}

/// RFC 7009's answer: revoked (or never valid: the same 200), or the client's error.
public struct IdentityOpenIDRevocation: Codable, Sendable, Equatable {
    public var error: IdentityOpenIDError?

    public init(error: IdentityOpenIDError? = nil) {
        self.error = error
    }
}

/// An application (an OpenID Provider client) with access to the account: the owner's consent, its live grants, or
/// both (``IdentityContract/openIDApplications``).
public struct IdentityOpenIDApplication: Codable, Sendable, Equatable {
    public var clientId: String
    /// The name the deployment registered it under (its id once it is no longer registered).
    public var name: String
    /// What it was let have or holds, sorted.
    public var scopes: [String]
    /// When the owner consented (nil for a first-party application, which asks none).
    public var consentedAt: Timestamp?
    /// Its live grants: sign-ins of it that still hold access.
    public var grants: Int
    /// When it last signed in or refreshed its tokens.
    public var lastUsedAt: Timestamp?

    public init(clientId: String, name: String, scopes: [String], consentedAt: Timestamp?, grants: Int, lastUsedAt: Timestamp?) {
        self.clientId = clientId
        self.name = name
        self.scopes = scopes
        self.consentedAt = consentedAt
        self.grants = grants
        self.lastUsedAt = lastUsedAt
    }
}

/// The applications with access to the caller's account, by id.
public struct IdentityOpenIDApplications: Codable, Sendable, Equatable {
    public var applications: [IdentityOpenIDApplication]

    public init(applications: [IdentityOpenIDApplication]) {
        self.applications = applications
    }
}

/// The owner takes an application's access away (``IdentityContract/revokeOpenIDApplication``).
public struct IdentityRevokeApplicationRequest: Codable, Sendable {
    public var token: BearerToken
    public var clientId: String

    public init(token: BearerToken, clientId: String) {
        self.token = token
        self.clientId = clientId
    }
}

/// What revoking an application ended.
public struct IdentityApplicationRevoked: Codable, Sendable, Equatable {
    public var grantsEnded: Int

    public init(grantsEnded: Int) {
        self.grantsEnded = grantsEnded
    }
}

/// RP-initiated logout's request as the console forwards it (``IdentityContract/openIDLogout``; OpenID Connect
/// RP-Initiated Logout 1.0): `id_token_hint`, `client_id`, `post_logout_redirect_uri`, `state` as they came.
public struct IdentityOpenIDLogoutRequest: Codable, Sendable, Equatable {
    /// The console's session; nil when the browser has none.
    public var token: BearerToken?
    public var parameters: [IdentityOpenIDParameter]
    /// The person confirmed the sign-out on the console's page (its CSRF-checked form).
    public var confirmed: Bool
    /// The browser's address, for the audit.
    public var clientAddress: String?

    public init(token: BearerToken?, parameters: [IdentityOpenIDParameter], confirmed: Bool = false, clientAddress: String? = nil) {
        self.token = token
        self.parameters = parameters
        self.confirmed = confirmed
        self.clientAddress = clientAddress
    }
}

/// What the console does next with a logout request.
public struct IdentityOpenIDLogout: Codable, Sendable, Equatable {
    public enum Outcome: String, Codable, Sendable {
        /// Signed out (or no one was): send the browser to ``location`` (the client's post-logout redirect URI with
        /// its `state`) or, without one, show that the person is signed out.
        case loggedOut
        /// Ask the person first: the request did not prove it comes from the application the session signed in to
        /// (no `id_token_hint`, or one for someone else). ``client`` names the application when known.
        case confirm
        /// The request cannot be followed (a hint Konto did not sign, a redirect URI not registered): show
        /// ``errorDescription``, never redirect.
        case refused
    }

    public var outcome: Outcome
    public var location: String?
    public var client: IdentityOpenIDClientSummary?
    /// How many of the application grants made through the session ended with it.
    public var grantsEnded: Int?
    public var error: String?
    public var errorDescription: String?

    public init(
        outcome: Outcome, location: String? = nil, client: IdentityOpenIDClientSummary? = nil, grantsEnded: Int? = nil, error: String? = nil,
        errorDescription: String? = nil
    ) {
        self.outcome = outcome
        self.location = location
        self.client = client
        self.grantsEnded = grantsEnded
        self.error = error
        self.errorDescription = errorDescription
    }

    public static func refused(_ error: String, _ description: String) -> Self { Self(outcome: .refused, error: error, errorDescription: description) }
}

import Crypto
import Foundation
import GatewayService
import HTTPTypes
import Hummingbird
import KontoModel
import KontoWire
import Mustache
import NIOCore

/// The web account console: SpeziAccount's AccountSetup, SignupForm and AccountOverview (and the password reset) as
/// server-rendered pages under a base path (`/account` unless configured), built from the configured keys.
///
/// It is a client of the gateway's own operations (``GatewayOperations``), called in process with the session the browser
/// holds, so the console and the HTTP API cannot disagree. Browser security: the session token lives in an
/// `HttpOnly`, `SameSite=Lax` cookie scoped to the console's path (`Secure` over TLS); every form carries a CSRF
/// token bound to a second cookie (HMAC under a key derived from the wire secret, so any gateway replica checks
/// it); pages allow scripts and styles from the gateway only (no inline script), can't be framed, aren't cached and
/// send no referrer (a reset link's token stays out of other sites' logs).
struct AccountConsole: GatewayPages {
    struct Options: Sendable {
        /// Where the console is served, e.g. `/account`.
        var basePath: String
        /// Whether AccountSetup offers to continue without an account (an anonymous session).
        var allowsAnonymous: Bool
        /// Whether AccountSetup offers to sign in with a code by mail (Identity's `KONTO_IDENTITY_EMAIL_CODE_LOGIN`).
        var offersEmailCode = false
        /// The deployment's public URL (`KONTO_PUBLIC_URL`): where providers send the browser back. None: no providers.
        var publicURL: String?
        /// `Secure` cookies: always, never, or (nil) when a trusted proxy says the request came over HTTPS.
        var secureCookies: Bool?
        var maximumBodyBytes: Int
        /// Said after every "a mail is on its way" (the dev stack without a mail server: where its link is shown).
        var mailNote: String?
    }

    let operations: GatewayOperations
    let schema: ConsoleSchema
    let options: Options
    let library: MustacheLibrary
    let csrfKey: SymmetricKey
    let providerList = ConsoleProviderList()

    static let sessionCookie = "konto_session"
    static let csrfCookie = "konto_csrf"
    /// OWASP's device cookie: a random marker set after a successful login and kept for ``deviceCookieSeconds``;
    /// Identity remembers (its hash) for the account, so strangers' failures never lock this browser out.
    static let deviceCookie = "konto_device"
    static let deviceCookieSeconds = 90 * 86_400

    /// The console for a gateway whose configuration has a console path; none when it is off.
    static let pages: GatewayPagesFactory = { context in
        let configuration = context.configuration
        guard let basePath = configuration.consolePath else { return nil }
        return try AccountConsole(
            operations: context.operations,
            accounts: configuration.accounts,
            options: Options(
                basePath: basePath,
                allowsAnonymous: configuration.consoleAllowsAnonymous,
                offersEmailCode: configuration.emailCodeLogin,
                publicURL: configuration.publicURL,
                secureCookies: configuration.consoleSecureCookies,
                maximumBodyBytes: configuration.maximumBodyBytes,
                mailNote: configuration.consoleMailNote
            ),
            secret: configuration.secret
        )
    }

    var basePath: String { options.basePath }

    /// What the userId is, as the pages name it ("Change your email address").
    var userIdNoun: String { schema.configuration.userIdType == .emailAddress ? "email address" : "username" }

    /// `text`, which says a mail is on its way, with the deployment's note on where mail goes, if it has one.
    func mailSent(_ text: String) -> String {
        options.mailNote.map { text + " " + $0 } ?? text
    }

    init(operations: GatewayOperations, accounts: AccountConfiguration, options: Options, secret: WireSecret) throws {
        self.operations = operations
        self.schema = ConsoleSchema(configuration: accounts)
        self.options = options
        self.library = try ConsoleTemplates.library()
        self.csrfKey = secret.derivedKey(purpose: "konto-console-csrf")
    }


    // MARK: Responses

    static let securityHeaders: HTTPFields = [
        HTTPField.Name("Content-Security-Policy")!:
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("X-Frame-Options")!: "DENY",
        HTTPField.Name("Referrer-Policy")!: "no-referrer",
        .cacheControl: "no-store",
    ]

    /// What one request of the console knows: its CSRF cookie (made if it had none) and its session, if any.
    struct Visit: Sendable {
        var csrfCookie: String
        var isNewCSRFCookie: Bool
        var session: String?
        var secure: Bool
        /// The browser's device marker, if it has a well-formed one.
        var device: String? = nil
        /// The browser as people name it (``BrowserName``), for what the console names after it.
        var browser: String? = nil
        /// An authorization request waits for this sign-in (``AccountConsole/authorizationCookie``).
        var awaitsAuthorization = false
        /// A verification link waits for this sign-in (``AccountConsole/verificationCookie``).
        var awaitsVerification = false
    }

    func visit(_ request: Request) -> Visit {
        let cookies = request.cookies
        let existing = cookies[Self.csrfCookie]?.value
        let valid = existing.flatMap { Self.isWellFormedCookieToken($0) ? $0 : nil }
        let session = cookies[Self.sessionCookie].map(\.value).flatMap { (1...512).contains($0.utf8.count) ? $0 : nil }
        // X-Forwarded-Proto is believed from a trusted proxy only.
        let secure = options.secureCookies
            ?? (operations.viaTrustedProxy && request.headers[HTTPField.Name("X-Forwarded-Proto")!]?.lowercased() == "https")
        let device = cookies[Self.deviceCookie].map(\.value).flatMap { Self.isWellFormedCookieToken($0) ? $0 : nil }
        return Visit(
            csrfCookie: valid ?? Self.randomToken(), isNewCSRFCookie: valid == nil, session: session, secure: secure, device: device,
            browser: BrowserName.from(userAgent: request.headers[.userAgent]), awaitsAuthorization: cookies[Self.authorizationCookie]?.value.isEmpty == false,
            awaitsVerification: cookies[Self.verificationCookie]?.value.isEmpty == false
        )
    }

    func page(_ template: String, title: String, visit: Visit, status: HTTPResponse.Status = .ok, _ configure: (inout ConsolePage) -> Void = { _ in }) -> Response {
        var page = ConsolePage(title: title, base: options.basePath, csrf: csrfToken(for: visit.csrfCookie))
        page.userIdNoun = userIdNoun
        configure(&page)
        let html = ConsoleTemplates.render(page, template: template, in: library)
        var headers = Self.securityHeaders
        headers[.contentType] = "text/html; charset=utf-8"
        var response = Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
        if visit.isNewCSRFCookie {
            response.setCookie(cookie(Self.csrfCookie, visit.csrfCookie, visit: visit, sameSite: .strict))
        }
        return response
    }

    /// 303 to `path` under the console (after a form: the browser then GETs it).
    func redirect(_ path: String, visit: Visit, session: (token: String, expiresAt: Date)?? = nil) -> Response {
        var headers = Self.securityHeaders
        headers[.location] = options.basePath + path
        // A sign-in that an authorization request or a verification link waits for goes back to it (which checks its
        // cookie).
        if case .some(.some) = session, path == "/" || path.hasPrefix("/?") {
            if visit.awaitsAuthorization {
                headers[.location] = options.basePath + "/authorize/resume"
            } else if visit.awaitsVerification {
                headers[.location] = options.basePath + "/verify/resume"
            }
        }
        var response = Response(status: .seeOther, headers: headers)
        if visit.isNewCSRFCookie {
            response.setCookie(cookie(Self.csrfCookie, visit.csrfCookie, visit: visit, sameSite: .strict))
        }
        switch session {
        case .some(.some(let session)):
            let seconds = max(1, Int(session.expiresAt.timeIntervalSinceNow))
            response.setCookie(cookie(Self.sessionCookie, session.token, visit: visit, sameSite: .lax, maxAge: seconds))
        case .some(.none):
            response.setCookie(endedSessionCookie(visit))
        case .none:
            break
        }
        return response
    }

    /// The device marker a browser gets with its first successful login (kept when it has one).
    func deviceCookie(_ device: String, visit: Visit) -> Cookie {
        cookie(Self.deviceCookie, device, visit: visit, sameSite: .lax, maxAge: Self.deviceCookieSeconds)
    }

    /// Drops the browser's session cookie (logged out, deleted, reset).
    func endedSessionCookie(_ visit: Visit) -> Cookie {
        cookie(Self.sessionCookie, "", visit: visit, sameSite: .lax, maxAge: 0)
    }

    func cookie(_ name: String, _ value: String, visit: Visit, sameSite: Cookie.SameSite, maxAge: Int? = nil, secure: Bool? = nil) -> Cookie {
        Cookie(name: name, value: value, maxAge: maxAge, path: options.basePath, secure: secure ?? visit.secure, httpOnly: true, sameSite: sameSite)
    }

    static func asset(_ text: String, contentType: String) -> Response {
        var headers = securityHeaders
        headers[.contentType] = contentType
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    // MARK: CSRF

    /// The form token for a CSRF cookie (``ConsoleCSRF``).
    func csrfToken(for cookie: String) -> String {
        ConsoleCSRF(cookieName: Self.csrfCookie, key: csrfKey).token(for: cookie)
    }

    /// A state-changing request is accepted only from the console's own pages (``ConsoleCSRF``).
    func isSameSiteForm(_ request: Request, form: ConsoleForm) -> Bool {
        ConsoleCSRF(cookieName: Self.csrfCookie, key: csrfKey).accepts(request, form: form)
    }

    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return base64URL((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    static func isWellFormedCookieToken(_ value: String) -> Bool {
        value.utf8.count == 43 && value.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func bytes(base64URL text: String, limit: Int = 128) -> [UInt8]? {
        guard text.utf8.count <= limit else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.utf8.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map(Array.init)
    }
}

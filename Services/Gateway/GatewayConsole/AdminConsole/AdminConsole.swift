import Crypto
import Foundation
import GatewayService
import HTTPTypes
import Hummingbird
import KontoWire
import Mustache
import NIOCore

/// The admin console on the admin listener (`/admin/console`): an operator signs in with an operator key and finds
/// accounts, looks at one (details, credential metadata, sessions, factors, linked identities, its audit trail),
/// disables, enables, ends sessions, mails a reset, removes a factor, unlinks an identity, deletes; reads the audit
/// log and the failed deliveries and delivers them again.
///
/// It is a client of the admin API's own handlers (``GatewayAdminOperations``), called in process with the key the
/// browser holds, so the console can do nothing the key could not do through the API, and every action is checked and
/// audited by Identity as the API's are. Browser security: the key lives only in a cookie sealed (AES-GCM) under a key
/// derived from the gateway's wire key, `HttpOnly`, `SameSite=Strict`, scoped to the console's path (`Secure` over
/// TLS) and good for ``sessionSeconds`` at most; the key is checked again by every call, so a revoked or expired key
/// ends the console's session at its next request. Every form carries the CSRF token of the account console's
/// scheme; pages allow no script, can't be framed, aren't cached and send no referrer.
struct AdminConsole: GatewayPages {
    static let basePath = "/admin/console"
    static let sessionCookie = "konto_admin"
    static let csrfCookie = "konto_admin_csrf"
    /// How long a sign-in lasts at most: a working day.
    static let sessionSeconds = 8 * 3_600

    let operations: GatewayAdminOperations
    let library: MustacheLibrary
    let csrfKey: SymmetricKey
    let sessionKey: SymmetricKey
    let secureCookies: Bool?
    let maximumBodyBytes: Int

    var basePath: String { Self.basePath }

    /// The admin console for every gateway that serves the admin listener.
    static let pages: GatewayPagesFactory = { context in
        try AdminConsole(
            operations: context.adminOperations, secret: context.configuration.secret, secureCookies: context.configuration.consoleSecureCookies,
            maximumBodyBytes: context.configuration.maximumBodyBytes
        )
    }

    init(operations: GatewayAdminOperations, secret: WireSecret, secureCookies: Bool?, maximumBodyBytes: Int) throws {
        self.operations = operations
        self.library = try ConsoleTemplates.library()
        self.csrfKey = secret.derivedKey(purpose: "konto-admin-console-csrf")
        self.sessionKey = secret.derivedKey(purpose: "konto-admin-console-session")
        self.secureCookies = secureCookies
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// What one request knows: its CSRF cookie (made if it had none) and the session its cookie holds, if any.
    struct Visit: Sendable {
        var csrfCookie: String
        var isNewCSRFCookie: Bool
        var session: Session?
        var secure: Bool
        var key: String? { session?.key }
    }

    /// A signed-in browser's: the key and, for the pages' header, who it is (a key's scopes never change).
    struct Session: Codable, Sendable {
        var key: String
        var keyId: String
        var name: String
        var scopes: [String]
        /// Unix seconds.
        var expires: Int64
    }

    func visit(_ request: Request) -> Visit {
        let existing = request.cookies[Self.csrfCookie]?.value
        let valid = existing.flatMap { AccountConsole.isWellFormedCookieToken($0) ? $0 : nil }
        let secure = secureCookies ?? (operations.viaTrustedProxy && request.headers[HTTPField.Name("X-Forwarded-Proto")!]?.lowercased() == "https")
        return Visit(
            csrfCookie: valid ?? AccountConsole.randomToken(), isNewCSRFCookie: valid == nil,
            session: request.cookies[Self.sessionCookie].flatMap { openSession($0.value) }, secure: secure
        )
    }

    // MARK: The session cookie

    /// The session sealed: `base64url(AES-GCM(JSON))`, so neither the browser nor anyone who reads the cookie learns
    /// the key from it without the gateway's wire key, and no one makes or alters one.
    func sealSession(_ session: Session) -> String {
        // A 256-bit key and a 12-byte nonce: sealing cannot fail; a struct of strings always encodes.
        let box = try! AES.GCM.seal(try! JSONEncoder().encode(session), using: sessionKey)
        return AccountConsole.base64URL(Array(box.combined!))
    }

    /// The session a cookie holds, while it lasts; nil for anything else.
    func openSession(_ cookie: String) -> Session? {
        guard let bytes = AccountConsole.bytes(base64URL: cookie, limit: 2_048), let box = try? AES.GCM.SealedBox(combined: bytes),
            let plain = try? AES.GCM.open(box, using: sessionKey), let session = try? JSONDecoder().decode(Session.self, from: plain),
            Date().timeIntervalSince1970 < Double(session.expires)
        else { return nil }
        return session
    }

    // MARK: Responses

    func page(_ template: String, title: String, visit: Visit, status: HTTPResponse.Status = .ok, _ configure: (inout AdminConsolePage) -> Void = { _ in }) -> Response {
        var page = AdminConsolePage(title: title, base: Self.basePath, csrf: csrfToken(for: visit.csrfCookie))
        page.key = visit.session.map { AdminConsolePage.Key(name: $0.name, id: $0.keyId, scopes: $0.scopes.joined(separator: " ")) }
        configure(&page)
        let html = library.render(page, withTemplate: template) ?? ""
        var headers = AccountConsole.securityHeaders
        headers[.contentType] = "text/html; charset=utf-8"
        var response = Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
        if visit.isNewCSRFCookie {
            response.setCookie(cookie(Self.csrfCookie, visit.csrfCookie, visit: visit))
        }
        return response
    }

    /// 303 to `path` under the console; `session`: one to begin (`.some(nil)`: signed out).
    func redirect(_ path: String, visit: Visit, session: Session?? = nil) -> Response {
        var headers = AccountConsole.securityHeaders
        headers[.location] = Self.basePath + path
        var response = Response(status: .seeOther, headers: headers)
        if visit.isNewCSRFCookie {
            response.setCookie(cookie(Self.csrfCookie, visit.csrfCookie, visit: visit))
        }
        switch session {
        case .some(.some(let session)):
            response.setCookie(cookie(Self.sessionCookie, sealSession(session), visit: visit, maxAge: Self.sessionSeconds))
        case .some(.none):
            response.setCookie(cookie(Self.sessionCookie, "", visit: visit, maxAge: 0))
        case .none:
            break
        }
        return response
    }

    func cookie(_ name: String, _ value: String, visit: Visit, maxAge: Int? = nil) -> Cookie {
        Cookie(name: name, value: value, maxAge: maxAge, path: Self.basePath, secure: visit.secure, httpOnly: true, sameSite: .strict)
    }

    // MARK: CSRF

    func csrfToken(for cookie: String) -> String {
        ConsoleCSRF(cookieName: Self.csrfCookie, key: csrfKey).token(for: cookie)
    }

    /// A state-changing request is accepted only from the console's own pages, as the account console's are.
    func isSameSiteForm(_ request: Request, form: ConsoleForm) -> Bool {
        ConsoleCSRF(cookieName: Self.csrfCookie, key: csrfKey).accepts(request, form: form)
    }
}

import Crypto
import Foundation
import GatewayService
import HTTPTypes
import Hummingbird

/// The consoles' CSRF protection (the account console's and the admin console's, each with its cookie and key): a
/// form's token is the HMAC of a random cookie under a key derived from the wire secret (so any gateway replica checks
/// it), and a state-changing request is accepted only when the browser did not mark it cross-site, it carries the
/// cookie, and its form's token is that cookie's HMAC (checked in constant time).
struct ConsoleCSRF: Sendable {
    let cookieName: String
    let key: SymmetricKey

    /// The form token for a CSRF cookie: its HMAC, base64url.
    func token(for cookie: String) -> String {
        AccountConsole.base64URL(Array(HMAC<SHA256>.authenticationCode(for: Array(cookie.utf8), using: key)))
    }

    func accepts(_ request: Request, form: ConsoleForm) -> Bool {
        if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!], site != "same-origin", site != "none" {
            return false
        }
        guard let cookie = request.cookies[cookieName]?.value, AccountConsole.isWellFormedCookieToken(cookie),
            let token = form["_csrf"], let mac = AccountConsole.bytes(base64URL: token)
        else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Array(cookie.utf8), using: key)
    }
}

/// A browser as people name it ("Chrome on Linux"), from its User-Agent: the name an unnamed passkey gets in the
/// console, so the factor list tells passkeys apart (the authenticator's own name would need a registry of AAGUIDs).
///
/// Only the common families, checked in the order their User-Agents contain one another's tokens (Edge and Opera
/// say Chrome, Chrome says Safari); anything else is nil and the passkey keeps Identity's default name.
enum BrowserName {
    static func from(userAgent: String?) -> String? {
        guard let userAgent, userAgent.utf8.count <= 1_024 else { return nil }
        let browser: String? = if userAgent.contains("Edg/") {
            "Edge"
        } else if userAgent.contains("OPR/") {
            "Opera"
        } else if userAgent.contains("Firefox/") {
            "Firefox"
        } else if userAgent.contains("Chrome/") || userAgent.contains("Chromium/") || userAgent.contains("HeadlessChrome/") {
            "Chrome"
        } else if userAgent.contains("Safari/") {
            "Safari"
        } else {
            nil
        }
        guard let browser else { return nil }
        let system: String? = if userAgent.contains("iPhone") {
            "iPhone"
        } else if userAgent.contains("iPad") {
            "iPad"
        } else if userAgent.contains("Android") {
            "Android"
        } else if userAgent.contains("Mac OS X") || userAgent.contains("Macintosh") {
            "macOS"
        } else if userAgent.contains("Windows") {
            "Windows"
        } else if userAgent.contains("CrOS") {
            "ChromeOS"
        } else if userAgent.contains("Linux") {
            "Linux"
        } else {
            nil
        }
        return system.map { "\(browser) on \($0)" } ?? browser
    }
}

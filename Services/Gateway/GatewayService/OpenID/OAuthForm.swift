import Foundation

/// An OAuth request's `application/x-www-form-urlencoded` body (or a query), read with Foundation's URL parsing in
/// order, so a parameter given twice is seen and refused (RFC 6749 3.1, 3.2).
package struct OAuthForm: Sendable, Equatable {
    /// The first value of each parameter.
    package private(set) var values: [String: String] = [:]
    /// The first parameter given more than once, if any.
    package private(set) var duplicated: String?
    /// Every pair, in order.
    package private(set) var pairs: [(name: String, value: String)] = []

    package static func == (left: OAuthForm, right: OAuthForm) -> Bool {
        left.values == right.values && left.duplicated == right.duplicated && left.pairs.map(\.name) == right.pairs.map(\.name)
    }

    /// Decodes `body`; nil when Foundation cannot read it as a query. Leniently otherwise, as browsers and Foundation
    /// do: a stray `%` or a raw space stays itself (the values are checked after).
    package init?(_ body: String) {
        guard !body.isEmpty else { return }
        // '+' is a space in form encoding; URLComponents reads only percent escapes. Parsed through the failable
        // initialiser: assigning `percentEncodedQuery` a malformed escape traps, which a client must never be able to do.
        guard let components = URLComponents(string: "?" + body.replacingOccurrences(of: "+", with: "%20")), let items = components.queryItems else {
            return nil
        }
        for item in items where !item.name.isEmpty {
            let value = item.value ?? ""
            pairs.append((item.name, value))
            if values[item.name] == nil {
                values[item.name] = value
            } else if duplicated == nil {
                duplicated = item.name
            }
        }
    }

    package subscript(_ name: String) -> String? {
        values[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// RFC 6749 2.3.1's HTTP Basic credentials: base64 of the form-encoded id, a colon, the form-encoded secret; nil
    /// when the header is not Basic or does not decode.
    package static func basicCredentials(_ authorization: String?) -> (id: String, secret: String)? {
        guard let authorization, authorization.count > 6, authorization.prefix(6).lowercased() == "basic ",
              let data = Data(base64Encoded: String(authorization.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
              let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return nil }
        func decoded(_ part: Substring) -> String? {
            part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }
        guard let id = decoded(text[..<colon]), let secret = decoded(text[text.index(after: colon)...]), !id.isEmpty else { return nil }
        return (id, secret)
    }
}

import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A minimal browser for the console's HTTP tests: keeps cookies, does not follow redirects (they are asserted),
/// and posts forms with the CSRF token of the last page it read.
struct ConsoleBrowser {
    struct Page {
        let status: Int
        let headers: HTTPHeaders
        let html: String

        var location: String? { headers.first(name: "Location") }
        var csrf: String? {
            html.firstMatch(of: /name="_csrf" value="([^"]*)"/).map { String($0.output.1) }
        }
        /// The `Set-Cookie` line for `name`, if the answer set it.
        func setCookie(_ name: String) -> String? {
            headers["Set-Cookie"].first { $0.hasPrefix(name + "=") }
        }
    }

    let baseURL: String
    let http: HTTPClient
    var cookies: [String: String] = [:]
    var lastCSRF: String?
    var extraHeaders: [(String, String)] = []

    init(baseURL: String, http: HTTPClient) {
        self.baseURL = baseURL
        self.http = http
    }

    static func withClient<Result>(_ body: (HTTPClient) async throws -> Result) async throws -> Result {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let result = try await body(http)
            try await http.shutdown()
            return result
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    mutating func get(_ path: String) async throws -> Page {
        try await send(.GET, path, body: nil)
    }

    /// Posts `fields` as a form, with `_csrf` from the last page unless `csrf` says otherwise.
    mutating func post(_ path: String, _ fields: [(String, String)], csrf: String?? = .none) async throws -> Page {
        var all = fields
        switch csrf {
        case .none: if let lastCSRF { all.append(("_csrf", lastCSRF)) }
        case .some(.some(let token)): all.append(("_csrf", token))
        case .some(.none): break
        }
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let body = all.map { name, value in
            (name.addingPercentEncoding(withAllowedCharacters: allowed) ?? "") + "=" + (value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
        }.joined(separator: "&")
        return try await send(.POST, path, body: body)
    }

    private mutating func send(_ method: HTTPMethod, _ path: String, body: String?) async throws -> Page {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if !cookies.isEmpty {
            request.headers.add(name: "Cookie", value: cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))
        }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: body))
        }
        for (name, value) in extraHeaders {
            request.headers.replaceOrAdd(name: name, value: value)
        }
        let response = try await http.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        let page = Page(status: Int(response.status.code), headers: response.headers, html: String(buffer: bytes))
        for line in response.headers["Set-Cookie"] {
            let pair = line.split(separator: ";", maxSplits: 1).first ?? ""
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { continue }
            if line.contains("Max-Age=0") {
                cookies.removeValue(forKey: String(parts[0]))
            } else {
                cookies[String(parts[0])] = String(parts[1])
            }
        }
        if let csrf = page.csrf { lastCSRF = csrf }
        return page
    }
}

import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// What Identity asks of a provider over HTTP: its discovery document and keys (GET), its token and revocation
/// endpoints (a form POST). A protocol so the verifier's tests can serve keys without a network.
public protocol ProviderFetcher: Sendable {
    /// The body of a 200 answer, at most `limit` bytes.
    func get(_ url: String, limit: Int) async throws(ProviderFetchError) -> [UInt8]
    /// The status and body (at most `limit` bytes) of a form POST.
    func post(_ url: String, form: [(String, String)], limit: Int) async throws(ProviderFetchError) -> (status: Int, body: [UInt8])
}

/// A provider that could not be reached, or answered something Konto cannot use. Never carries a token or secret.
public struct ProviderFetchError: Error, Sendable, CustomStringConvertible {
    public let reason: String

    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}

/// Fetches over AsyncHTTPClient's shared client, each request within its deadline and its body bounded before it is
/// buffered (a hostile or broken provider cannot make Identity hold more).
public struct HTTPProviderFetcher: ProviderFetcher {
    public var timeout: Duration

    /// Redirects are not followed (AsyncHTTPClient's shared client follows them): a provider's endpoints are where
    /// its discovery says, and a redirect could carry a client secret or a token elsewhere. Lives as long as the
    /// process, as the shared client does.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    public init(timeout: Duration = .seconds(5)) {
        self.timeout = timeout
    }

    public func get(_ url: String, limit: Int) async throws(ProviderFetchError) -> [UInt8] {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        let (status, body) = try await execute(request, url: url, limit: limit)
        guard status == 200 else { throw ProviderFetchError("\(Self.redacted(url)) answered \(status)") }
        return body
    }

    public func post(_ url: String, form: [(String, String)], limit: Int) async throws(ProviderFetchError) -> (status: Int, body: [UInt8]) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: FormEncoding.encode(form)))
        return try await execute(request, url: url, limit: limit)
    }

    private func execute(_ request: HTTPClientRequest, url: String, limit: Int) async throws(ProviderFetchError) -> (status: Int, body: [UInt8]) {
        do {
            let response = try await Self.client.execute(request, timeout: .init(timeout))
            if let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length > limit {
                throw ProviderFetchError("\(Self.redacted(url)) answered more than \(limit) bytes")
            }
            var body = try await response.body.collect(upTo: limit)
            return (Int(response.status.code), body.readBytes(length: body.readableBytes) ?? [])
        } catch let error as ProviderFetchError {
            throw error
        } catch is NIOTooManyBytesError {
            throw ProviderFetchError("\(Self.redacted(url)) answered more than \(limit) bytes")
        } catch {
            throw ProviderFetchError("\(Self.redacted(url)) could not be reached: \(type(of: error))")
        }
    }

    /// The URL without its query (where a token could be).
    static func redacted(_ url: String) -> String {
        String(url.prefix { $0 != "?" }.prefix(200))
    }
}

/// `application/x-www-form-urlencoded` (the HTML form encoding: unreserved characters kept, space as %20).
enum FormEncoding {
    static func encode(_ fields: [(String, String)]) -> String {
        fields.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }

    // ASCII only: CharacterSet.alphanumerics would keep non-ASCII letters unescaped.
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }
}

import Foundation

/// The URLs a provider flow names (an issuer, a redirect URI): https, or http on loopback for development and tests;
/// no user info or fragment, at most 512 bytes.
enum ProviderURL {
    static func isAcceptable(_ text: String, allowingQuery: Bool) -> Bool {
        guard text.utf8.count <= 512, let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(),
              url.fragment == nil, url.user == nil, allowingQuery || url.query == nil
        else { return false }
        return scheme == "https" || (scheme == "http" && ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host))
    }
}

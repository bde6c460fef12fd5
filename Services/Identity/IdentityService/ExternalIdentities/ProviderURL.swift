import Foundation

/// The URLs a provider flow names (an issuer, a redirect URI): https, or http on loopback for development and tests;
/// no user info or fragment, at most 512 bytes.
enum ProviderURL {
    /// Whether the endpoints a provider's discovery names (its keys, token and revocation endpoints) may be called: https
    /// (http on loopback for development and tests), on the issuer's host or one the operator listed
    /// (`endpointHosts`). A discovery naming anything else is not used: a client secret or a token never goes over
    /// plain http or to a host nobody chose.
    static func endpointsAcceptable(_ metadata: ProviderMetadata, provider: IdentityProvider) -> Bool {
        guard let issuerHost = URL(string: provider.issuer)?.host?.lowercased() else { return false }
        let hosts = Set([issuerHost] + provider.endpointHosts)
        return ([metadata.jwksURI] + [metadata.tokenEndpoint, metadata.revocationEndpoint].compactMap { $0 }).allSatisfy { endpoint in
            isAcceptable(endpoint, allowingQuery: true) && URL(string: endpoint)?.host.map { hosts.contains($0.lowercased()) } == true
        }
    }

    static func isAcceptable(_ text: String, allowingQuery: Bool) -> Bool {
        guard text.utf8.count <= 512, let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(),
              url.fragment == nil, url.user == nil, allowingQuery || url.query == nil
        else { return false }
        return scheme == "https" || (scheme == "http" && ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host))
    }
}

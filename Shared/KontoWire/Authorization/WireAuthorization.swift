/// A server's allow-list: which calling service may call which of its methods.
///
/// The caller's name is what the handshake proved (each service holds only its own key), so a rule names a service,
/// a family of services by prefix (`"operator-*"`), or every authenticated caller (`"*"`). A call the list does not
/// allow is answered `wire.forbidden` and never reaches its handler. The services' lists are written once, beside
/// the contracts (KontoContracts' `WireAllowList`).
public struct WireAuthorization: Sendable, Hashable {
    /// Peer pattern → the methods it may call.
    public private(set) var rules: [String: Set<String>]

    /// Every authenticated caller may call every method: for servers that are not Konto services (tests, tools).
    public static let allowingEveryone = WireAuthorization(["*": ["*"]])

    /// - Parameter rules: a peer pattern (`"gateway"`, `"operator-*"`, `"*"`) and the methods it may call (names, or
    ///   `"*"` for all).
    public init(_ rules: [String: Set<String>]) {
        self.rules = rules
    }

    /// Whether `peer` may call `method`.
    public func allows(peer: String, method: String) -> Bool {
        for (pattern, methods) in self.rules where Self.matches(pattern, peer) {
            if methods.contains("*") || methods.contains(method) { return true }
        }
        return false
    }

    /// The methods among `methods` that `peer` may call: worked out once per connection, at the handshake.
    public func permittedMethods(for peer: String, among methods: Set<String>) -> Set<String> {
        methods.filter { self.allows(peer: peer, method: $0) }
    }

    static func matches(_ pattern: String, _ peer: String) -> Bool {
        if pattern == "*" { return true }
        if pattern.hasSuffix("*") {
            let prefix = pattern.dropLast()
            // A family prefix needs a member name after it: "operator-" alone is not an operator.
            return peer.count > prefix.count && peer.hasPrefix(prefix)
        }
        return pattern == peer
    }
}

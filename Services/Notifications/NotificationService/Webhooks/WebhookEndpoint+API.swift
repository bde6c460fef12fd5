import Foundation
import KontoContracts

extension WebhookEndpoint {
    /// The longest URL an endpoint added through the API may have, in UTF-8 bytes.
    static let maximumURLLength = 2_048

    /// Every problem with an endpoint to be added through the admin API, each a sentence; empty when it can be added.
    /// Stricter than the file: https only and no credentials in the URL, and — unless the deployment allows local
    /// endpoints (development) — no `localhost` nor an address of this machine, a private network, or link-local
    /// (a cloud's metadata service), so a key with `deliveries:write` cannot point Notifications at the inside. A host
    /// name is not resolved here: a public name that resolves to such an address is the DNS owner's doing, which only
    /// a resolver check at connection time would catch (docs/NOTIFICATIONS.md says so).
    static func problems(adding request: NotificationsAddWebhookRequest, allowsLocal: Bool) -> [String] {
        var problems: [String] = []
        if !isValidName(request.name) { problems.append(nameRule) }
        if request.url.utf8.count > maximumURLLength {
            problems.append("url is longer than \(maximumURLLength) bytes")
        } else if let url = URL(string: request.url), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty {
            if scheme != "https" && !(scheme == "http" && allowsLocal) {
                problems.append(allowsLocal ? "url must be an https or http URL" : "url must be an https URL")
            }
            if url.user != nil || url.password != nil {
                problems.append("url must not carry credentials (the signing secret authenticates each request)")
            }
            if !allowsLocal && isLocal(host: host) {
                problems.append("url must name a public host: localhost and loopback, private and link-local addresses are refused")
            }
        } else {
            problems.append("url must be an absolute https URL with a host")
        }
        problems += typeProblems(request.types)
        if let secret = request.secret {
            do {
                _ = try WebhookSecret(secret)
            } catch {
                problems.append("secret \(error.message) (\(error.code)); write whsec_ followed by the base64 of at least \(WebhookSecret.minimumKeyBytes) random bytes, or leave it out to have one made")
            }
        }
        return problems
    }

    /// Whether a URL's host names this machine or an address that is not public. Literal addresses are read the way
    /// the resolver reads them (`inet_aton` takes `127.1` and `2130706433` too), so no spelling slips past.
    static func isLocal(host: String) -> Bool {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host = String(host.dropLast()) }
        if host == "localhost" || host.hasSuffix(".localhost") { return true }
        // A zone id (`fe80::1%eth0`) names an interface of this machine: never a public host.
        if host.contains("%") { return true }
        var v4 = in_addr()
        if inet_aton(host, &v4) != 0 {
            return isLocal(ipv4: UInt32(bigEndian: v4.s_addr))
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            let bytes = withUnsafeBytes(of: v6) { Array($0) }
            // An IPv4 address mapped or embedded: judged as that address.
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && ((bytes[10] == 0xFF && bytes[11] == 0xFF) || (bytes[10] == 0 && bytes[11] == 0)) {
                let embedded = bytes[12..<16].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                if bytes[10] == 0xFF || embedded > 1 { return isLocal(ipv4: embedded) }
                return true  // :: and ::1
            }
            // NAT64 (64:ff9b::/96, RFC 6052; 64:ff9b:1::/48, RFC 8215): an IPv4 address behind a translator, judged as it.
            if bytes[0..<4] == [0x00, 0x64, 0xFF, 0x9B] {
                let embedded = bytes[12..<16].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                return bytes[4..<6] == [0x00, 0x01] || bytes[4..<12].allSatisfy({ $0 == 0 }) ? isLocal(ipv4: embedded) : true
            }
            // 6to4 (2002::/16): the IPv4 address in bytes 2 to 5.
            if bytes[0] == 0x20 && bytes[1] == 0x02 {
                return isLocal(ipv4: bytes[2..<6].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            }
            return bytes[0] & 0xFE == 0xFC  // unique local fc00::/7
                || (bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80)  // link-local fe80::/10
                || (bytes[0] == 0xFE && bytes[1] & 0xC0 == 0xC0)  // site-local fec0::/10 (deprecated)
                || bytes[0] == 0xFF  // multicast ff00::/8
                || (bytes[0] == 0x20 && bytes[1] == 0x01 && bytes[2] == 0 && bytes[3] == 0)  // Teredo 2001::/32: an IPv4 address obscured
        }
        return false
    }

    private static func isLocal(ipv4 address: UInt32) -> Bool {
        let a = address >> 24, b = (address >> 16) & 0xFF
        return a == 0 || a == 10 || a == 127  // this network, private, loopback
            || (a == 100 && (64...127).contains(b))  // shared (carrier-grade NAT)
            || (a == 169 && b == 254)  // link-local (metadata services)
            || (a == 172 && (16...31).contains(b)) || (a == 192 && b == 168)  // private
            || a >= 224  // multicast, reserved, broadcast
    }
}

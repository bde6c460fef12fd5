import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The proxies whose forwarding headers the gateway believes (`KONTO_GATEWAY_TRUSTED_PROXIES`, a list of CIDR ranges
/// or single addresses), and the client address it derives from a request.
///
/// Only a request whose peer is a trusted proxy has its client-address header (`X-Forwarded-For`, …) and
/// `X-Forwarded-Proto` read. The client is the right-most entry of that header that is not itself a trusted proxy:
/// entries to its left were written by whoever sent the request to the first proxy, so anyone can forge them. An
/// IPv6 client is one per /64 (a host is usually given a whole /64, so per address would let it rotate freely).
public struct TrustedProxies: Sendable, Equatable {
    /// An address range: the network's bytes (4 or 16) and the prefix length.
    public struct Range: Sendable, Equatable {
        var bytes: [UInt8]
        var prefixLength: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var remaining = prefixLength
            for index in bytes.indices where remaining > 0 {
                let bits = min(remaining, 8)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                guard address[index] & mask == bytes[index] & mask else { return false }
                remaining -= bits
            }
            return true
        }
    }

    var ranges: [Range]

    public static let none = TrustedProxies(ranges: [])

    init(ranges: [Range]) {
        self.ranges = ranges
    }

    /// Parses a comma-separated list such as `10.0.0.0/8, 192.0.2.7, fd00::/8`.
    /// - Throws: the first entry that is not an address or a range, as its text.
    public init(parsing list: String) throws(InvalidEntry) {
        var ranges: [Range] = []
        for entry in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            let parts = entry.split(separator: "/", maxSplits: 1).map(String.init)
            guard let bytes = Self.bytes(of: parts[0]) else { throw InvalidEntry(entry: entry) }
            let maximum = bytes.count * 8
            let prefixLength = parts.count == 2 ? Int(parts[1]) : maximum
            guard let prefixLength, (0...maximum).contains(prefixLength) else { throw InvalidEntry(entry: entry) }
            ranges.append(Range(bytes: bytes, prefixLength: prefixLength))
        }
        self.ranges = ranges
    }

    public struct InvalidEntry: Error, Equatable {
        public var entry: String
    }

    public var isEmpty: Bool { ranges.isEmpty }

    /// Whether `address` (an IP address as text) is one of the trusted proxies.
    func trusts(_ address: String?) -> Bool {
        guard let address, let bytes = Self.bytes(of: address) else { return false }
        return ranges.contains { $0.contains(bytes) }
    }

    /// The client address of a request from `peer` whose client-address header holds `forwarded` (nil: none, or no
    /// header configured): the peer itself unless it is trusted, else the right-most untrusted entry of the header
    /// (nil when the header is missing or names only proxies). IPv6 addresses as their /64.
    func clientAddress(peer: String?, forwarded: String?) -> String? {
        guard trusts(peer) else { return peer.map(Self.throttlingKey) }
        guard let forwarded else { return nil }
        for entry in forwarded.split(separator: ",").reversed() {
            let address = Self.stripPort(entry.trimmingCharacters(in: .whitespaces))
            if address.isEmpty || address.utf8.count > 64 { return nil }
            if !trusts(address) { return Self.throttlingKey(address) }
        }
        return nil
    }

    /// What an address counts as: an IPv6 address by its /64 (`2001:db8:1:2::/64`), an IPv4-mapped one as IPv4,
    /// anything else as it is.
    static func throttlingKey(_ address: String) -> String {
        guard let bytes = bytes(of: address), bytes.count == 16 else { return address }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return bytes[12...].map(String.init).joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }

    /// `192.0.2.1:443` → `192.0.2.1`, `[2001:db8::1]:443` → `2001:db8::1`; a bare IPv6 address is left whole.
    static func stripPort(_ entry: String) -> String {
        if entry.hasPrefix("["), let end = entry.firstIndex(of: "]") {
            return String(entry[entry.index(after: entry.startIndex)..<end])
        }
        let colons = entry.filter { $0 == ":" }.count
        if colons == 1, let colon = entry.firstIndex(of: ":") {
            return String(entry[..<colon])
        }
        return entry
    }

    /// The address's bytes (4 for IPv4, 16 for IPv6), nil if it is not an IP address. inet_pton is strict: no
    /// leading zeros' octal, no partial forms.
    static func bytes(of address: String) -> [UInt8]? {
        // Byte buffers rather than in_addr/in6_addr: the structs' initialisers resolve to whichever C module (Glibc,
        // NIO's CNIOLinux) the build saw first, which member-import visibility then refuses.
        var v4 = [UInt8](repeating: 0, count: 4)
        if inet_pton(AF_INET, address, &v4) == 1 {
            return v4
        }
        var v6 = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET6, address, &v6) == 1 {
            return v6
        }
        return nil
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a session keeps of the client that signed in, for its owner's list of sessions: enough to tell one's devices
/// apart and to spot a stranger's, and no more (no host address, a bounded name).
enum SessionClient {
    /// The longest client name kept, in characters.
    static let maximumNameLength = 256

    /// The network an address is in: an IPv4 address's /24 (`203.0.113.0/24`), an IPv6 address's /48
    /// (`2001:db8:1::/48`; the gateway may pass a /64 already); nil for anything else. The host's own address is
    /// never kept: the owner recognises a network as well, and a leaked list pins nobody to a house.
    static func coarse(address: String?) -> String? {
        guard var text = address, !text.isEmpty, text.utf8.count <= 64 else { return nil }
        if let slash = text.firstIndex(of: "/") { text = String(text[..<slash]) }
        if !text.contains(":") {
            var v4 = in_addr()
            // inet_pton takes only dotted quads, unlike inet_aton: an address the gateway wrote, not a spelling game.
            guard inet_pton(AF_INET, text, &v4) == 1 else { return nil }
            let bytes = withUnsafeBytes(of: v4.s_addr) { Array($0) }
            return "\(bytes[0]).\(bytes[1]).\(bytes[2]).0/24"
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return "\(bytes[12]).\(bytes[13]).\(bytes[14]).0/24"
        }
        let groups = stride(from: 0, to: 6, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/48"
    }

    /// A client's name as kept: white space runs made one space, control and format characters dropped, at most
    /// ``maximumNameLength`` characters; nil when nothing is left.
    static func name(_ raw: String?) -> String? {
        guard let raw else { return nil }
        var kept = ""
        var count = 0
        var pendingSpace = false
        for scalar in raw.unicodeScalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !kept.isEmpty
                continue
            }
            switch scalar.properties.generalCategory {
            case .control, .format, .surrogate, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator: continue
            default: break
            }
            if pendingSpace {
                guard count < maximumNameLength else { break }
                kept.unicodeScalars.append(" ")
                count += 1
                pendingSpace = false
            }
            guard count < maximumNameLength else { break }
            kept.unicodeScalars.append(scalar)
            count += 1
        }
        return kept.isEmpty ? nil : kept
    }
}

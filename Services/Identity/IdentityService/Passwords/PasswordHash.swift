import Foundation

/// A stored password hash as a PHC-style string. Konto makes argon2id only, in the form libargon2 writes:
/// `$argon2id$v=19$m=19456,t=2,p=1$<salt, base64 without padding>$<hash, same>`. Hashes an operator imports from
/// another system (docs/ADMIN.md, "Importing accounts") may also be bcrypt (`$2b$`, `$2a$`, `$2y$`, as
/// libxcrypt, OpenBSD and Python's `bcrypt` write them) or PBKDF2-SHA256 (the PHC form `$pbkdf2-sha256$i=…,l=…$…$…`
/// and passlib's `$pbkdf2-sha256$<rounds>$…$…`); each verifies once and is replaced by an argon2id hash at the first
/// successful sign-in (``PasswordHasher/needsRehash(_:)``).
///
/// Only the fields this service needs to read are read (the scheme, and argon2id's cost to decide on a rehash, or
/// PBKDF2's rounds, salt and digest); argon2id and bcrypt strings go whole to their libraries, which parse them again.
public struct PasswordHash: Sendable, Hashable {
    public enum Scheme: String, Sendable, Hashable {
        case argon2id
        case bcrypt
        case pbkdf2SHA256 = "pbkdf2-sha256"
    }

    /// PBKDF2-SHA256's fields, decoded.
    struct PBKDF2: Sendable, Hashable {
        var rounds: Int
        var salt: [UInt8]
        var digest: [UInt8]
    }

    public let encoded: String
    public let scheme: Scheme
    /// argon2id's parameters; nil for an imported hash of another scheme.
    public let parameters: Argon2Parameters?
    let pbkdf2: PBKDF2?

    /// PBKDF2 rounds an imported hash may ask for: fewer is no protection worth keeping, more a way to stall logins.
    static let pbkdf2Rounds = 1_000...10_000_000

    /// Reads a stored or imported hash; nil for anything that is none of the schemes above with readable fields.
    public init?(encoded: String) {
        guard encoded.utf8.count <= 512 else { return nil }
        let fields = encoded.split(separator: "$", omittingEmptySubsequences: false)
        if fields.count == 6, fields[0].isEmpty, fields[1] == "argon2id" {
            guard let parameters = Self.argon2(fields) else { return nil }
            (self.scheme, self.parameters, self.pbkdf2) = (.argon2id, parameters, nil)
        } else if fields.count == 4, fields[0].isEmpty, ["2a", "2b", "2y"].contains(fields[1]) {
            guard Self.isBcrypt(cost: fields[2], rest: fields[3]) else { return nil }
            (self.scheme, self.parameters, self.pbkdf2) = (.bcrypt, nil, nil)
        } else if fields.count == 5, fields[0].isEmpty, fields[1] == "pbkdf2-sha256" {
            guard let pbkdf2 = Self.pbkdf2(rounds: fields[2], salt: fields[3], digest: fields[4]) else { return nil }
            (self.scheme, self.parameters, self.pbkdf2) = (.pbkdf2SHA256, nil, pbkdf2)
        } else {
            return nil
        }
        self.encoded = encoded
    }

    /// "", "argon2id", "v=19", "m=…,t=…,p=…", salt, hash.
    private static func argon2(_ fields: [Substring]) -> Argon2Parameters? {
        guard fields[2] == "v=19", !fields[4].isEmpty, !fields[5].isEmpty else { return nil }
        var values: [Substring: UInt32] = [:]
        for pair in fields[3].split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let value = UInt32(parts[1]), values.updateValue(value, forKey: parts[0]) == nil else { return nil }
        }
        guard values.count == 3, let memory = values["m"], let iterations = values["t"], let parallelism = values["p"] else { return nil }
        return Argon2Parameters(
            memoryKiB: memory,
            iterations: iterations,
            parallelism: parallelism,
            // Base64 without padding: 4 characters carry 3 bytes.
            saltLength: fields[4].count * 3 / 4,
            hashLength: fields[5].count * 3 / 4
        )
    }

    /// bcrypt's cost (two digits, 4 to 31) and 53 characters of its own base64 (22 of salt, 31 of hash).
    private static func isBcrypt(cost: Substring, rest: Substring) -> Bool {
        guard cost.utf8.count == 2, let value = Int(cost), (4...31).contains(value), rest.utf8.count == 53 else { return false }
        return rest.utf8.allSatisfy { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "/") || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
    }

    /// The PHC form (`i=<rounds>[,l=<length>]`, standard base64 without padding) or passlib's (`<rounds>`, base64 with
    /// `.` for `+`, no padding).
    private static func pbkdf2(rounds: Substring, salt: Substring, digest: Substring) -> PBKDF2? {
        var count: Int?
        var length: Int?
        var passlib = false
        if let plain = Int(rounds) {
            count = plain
            passlib = true
        } else {
            for pair in rounds.split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, let value = Int(parts[1]) else { return nil }
                switch parts[0] {
                case "i" where count == nil: count = value
                case "l" where length == nil: length = value
                default: return nil
                }
            }
        }
        func decode(_ text: Substring) -> [UInt8]? {
            guard !text.isEmpty, text.utf8.count <= 200, !text.contains("="), !(passlib && text.contains("+")) else { return nil }
            var base64 = passlib ? text.replacingOccurrences(of: ".", with: "+") : String(text)
            base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
            return Data(base64Encoded: base64).map { Array($0) }
        }
        guard let count, pbkdf2Rounds.contains(count), let salt = decode(salt), let digest = decode(digest), (16...64).contains(digest.count),
              length.map({ $0 == digest.count }) ?? true
        else { return nil }
        return PBKDF2(rounds: count, salt: salt, digest: digest)
    }
}

/// A stored password hash in the PHC string format libargon2 writes:
/// `$argon2id$v=19$m=19456,t=2,p=1$<salt, base64 without padding>$<hash, same>`.
///
/// Only the fields this service needs to read are read (the variant, version and cost, to decide on a rehash);
/// verifying hands the whole string to libargon2, which parses it again and compares in constant time.
public struct PasswordHash: Sendable, Hashable {
    public let encoded: String
    public let parameters: Argon2Parameters

    /// Reads a stored PHC string; nil for anything that is not an argon2id v19 hash with readable parameters.
    public init?(encoded: String) {
        let fields = encoded.split(separator: "$", omittingEmptySubsequences: false)
        // "", "argon2id", "v=19", "m=…,t=…,p=…", salt, hash
        guard fields.count == 6, fields[0].isEmpty, fields[1] == "argon2id", fields[2] == "v=19",
              !fields[4].isEmpty, !fields[5].isEmpty
        else { return nil }
        var values: [Substring: UInt32] = [:]
        for pair in fields[3].split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let value = UInt32(parts[1]), values.updateValue(value, forKey: parts[0]) == nil else { return nil }
        }
        guard values.count == 3, let memory = values["m"], let iterations = values["t"], let parallelism = values["p"] else { return nil }
        self.encoded = encoded
        self.parameters = Argon2Parameters(
            memoryKiB: memory,
            iterations: iterations,
            parallelism: parallelism,
            // Base64 without padding: 4 characters carry 3 bytes.
            saltLength: fields[4].count * 3 / 4,
            hashLength: fields[5].count * 3 / 4
        )
    }
}

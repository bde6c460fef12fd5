import CArgon2

/// argon2id through libargon2: hashing to a PHC string, constant-time verification, and whether a stored hash
/// should be made again with the current parameters. Every call computes for tens of milliseconds: run it on
/// ``PasswordHashingPool``, never on an event loop.
public struct PasswordHasher: Sendable {
    public let parameters: Argon2Parameters

    public init(parameters: Argon2Parameters = .owaspMinimum) {
        self.parameters = parameters
    }

    /// A new hash of `password` with a fresh random salt.
    public func hash(_ password: String) throws(PasswordHashingError) -> PasswordHash {
        var salt = [UInt8](repeating: 0, count: parameters.saltLength)
        var generator = SystemRandomNumberGenerator()
        for index in salt.indices {
            salt[index] = generator.next()
        }
        let length = argon2_encodedlen(
            parameters.iterations,
            parameters.memoryKiB,
            parameters.parallelism,
            UInt32(salt.count),
            UInt32(parameters.hashLength),
            Argon2_id
        )
        var encoded = [CChar](repeating: 0, count: length)
        let password = Array(password.utf8)
        let status = argon2id_hash_encoded(
            parameters.iterations,
            parameters.memoryKiB,
            parameters.parallelism,
            password,
            password.count,
            salt,
            salt.count,
            parameters.hashLength,
            &encoded,
            encoded.count
        )
        guard status == ARGON2_OK.rawValue else {
            throw PasswordHashingError(status: status)
        }
        let text = String(decoding: encoded.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let hash = PasswordHash(encoded: text) else {
            throw PasswordHashingError(status: ARGON2_DECODING_FAIL.rawValue)
        }
        return hash
    }

    /// Whether `password` is the one `hash` was made from; libargon2 compares in constant time.
    public func verify(_ password: String, against hash: PasswordHash) -> Bool {
        let password = Array(password.utf8)
        return argon2id_verify(hash.encoded, password, password.count) == ARGON2_OK.rawValue
    }

    /// Whether a stored hash was made with other parameters than the current ones (rehash it at the next login).
    public func needsRehash(_ hash: PasswordHash) -> Bool {
        hash.parameters != parameters
    }
}

/// libargon2 refused to hash (e.g. parameters out of its range, memory that could not be allocated).
public struct PasswordHashingError: Error, Sendable, CustomStringConvertible {
    public let status: Int32

    public var description: String {
        "argon2 failed: \(String(cString: argon2_error_message(status)))"
    }
}

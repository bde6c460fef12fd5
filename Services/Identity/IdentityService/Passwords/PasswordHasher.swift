import CArgon2
import CCrypt
import Crypto
import CryptoExtras

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

    /// Whether `password` is the one `hash` was made from, compared in constant time: libargon2 for argon2id;
    /// libxcrypt for an imported bcrypt hash; PBKDF2-SHA256 (swift-crypto's) for an imported PBKDF2 one.
    public func verify(_ password: String, against hash: PasswordHash) -> Bool {
        switch hash.scheme {
        case .argon2id:
            let password = Array(password.utf8)
            return argon2id_verify(hash.encoded, password, password.count) == ARGON2_OK.rawValue
        case .bcrypt:
            return Self.verifyBcrypt(password, against: hash.encoded)
        case .pbkdf2SHA256:
            guard let fields = hash.pbkdf2 else { return false }
            return Self.verifyPBKDF2(password, against: fields)
        }
    }

    /// Whether a stored hash should be made again at the next successful login: argon2id with other parameters than
    /// the current ones, and every imported hash of another scheme.
    public func needsRehash(_ hash: PasswordHash) -> Bool {
        hash.scheme != .argon2id || hash.parameters != parameters
    }

    /// bcrypt through libxcrypt's `crypt_r` (re-hashes with the stored salt and cost). bcrypt reads a C string: a
    /// password with a NUL would be checked up to it only, so it never matches.
    static func verifyBcrypt(_ password: String, against encoded: String) -> Bool {
        guard !password.utf8.contains(0) else { return false }
        var data = crypt_data()
        let computed: [UInt8]? = withUnsafeMutablePointer(to: &data) { pointer in
            guard let result = crypt_r(password, encoded, pointer) else { return nil }
            return Array(String(cString: result).utf8)
        }
        guard let computed else { return false }
        return ConstantTime.equal(computed, Array(encoded.utf8))
    }

    static func verifyPBKDF2(_ password: String, against fields: PasswordHash.PBKDF2) -> Bool {
        guard let key = try? KDF.Insecure.PBKDF2.deriveKey(
            from: Array(password.utf8), salt: fields.salt, using: .sha256, outputByteCount: fields.digest.count, unsafeUncheckedRounds: fields.rounds
        ) else { return false }
        return key.withUnsafeBytes { ConstantTime.equal(Array($0), fields.digest) }
    }
}

/// libargon2 refused to hash (e.g. parameters out of its range, memory that could not be allocated).
public struct PasswordHashingError: Error, Sendable, CustomStringConvertible {
    public let status: Int32

    public var description: String {
        "argon2 failed: \(String(cString: argon2_error_message(status)))"
    }
}

extension PasswordHash {
    /// Reads a hash an operator imports, refusing one whose cost would stall sign-ins (each verification holds a
    /// hashing thread): argon2id up to 256 MiB, 16 passes and 16 lanes; bcrypt up to cost 15 (about 1.5 s here, twice
    /// what any platform we import from uses); PBKDF2 within ``pbkdf2Rounds``. The answer is the refusal's reason.
    public static func imported(_ encoded: String) -> Result<PasswordHash, ImportRefusal> {
        guard let hash = PasswordHash(encoded: encoded) else { return .failure(.unreadable) }
        switch hash.scheme {
        case .argon2id:
            guard let parameters = hash.parameters, parameters.memoryKiB <= 256 * 1024, (1...16).contains(parameters.iterations),
                  (1...16).contains(parameters.parallelism)
            else { return .failure(.tooCostly) }
        case .bcrypt:
            // `$2b$<cost>$…`: the cost was read as 4 to 31.
            let cost = encoded.split(separator: "$", omittingEmptySubsequences: false)[2]
            guard let value = Int(cost), value <= 15 else { return .failure(.tooCostly) }
        case .pbkdf2SHA256:
            break
        }
        return .success(hash)
    }

    public enum ImportRefusal: Error, Sendable, Equatable {
        /// None of the schemes Konto reads, or fields it cannot read.
        case unreadable
        /// Readable, but with a cost beyond the bounds.
        case tooCostly

        public var message: String {
            switch self {
            case .unreadable:
                "The password hash is not a PHC string Konto reads: argon2id, bcrypt ($2b$, $2a$, $2y$) or PBKDF2-SHA256."
            case .tooCostly:
                "The password hash's cost is beyond what Konto verifies (argon2id: m ≤ 262144, t ≤ 16, p ≤ 16; bcrypt: cost ≤ 15)."
            }
        }
    }
}

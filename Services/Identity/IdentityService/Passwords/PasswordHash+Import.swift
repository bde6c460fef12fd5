extension PasswordHash {
    /// What an imported hash may cost at each sign-in until it is replaced by Konto's own: a verification holds a
    /// hashing thread (`KONTO_IDENTITY_HASH_THREADS`, the cores by default) and, for argon2id, its memory, so the bound
    /// is what every thread verifying such a hash at once may take from a small pod (512 MiB) beside Identity itself:
    /// 128 MiB of argon2id memory a hash (two threads: 256 MiB), four passes at that size (memory × passes ≤ 512 MiB,
    /// about half a second here), eight lanes; bcrypt cost 13 (about 0.6 s; the platforms we import from use 10 to 12);
    /// PBKDF2-SHA256 up to 2,000,000 rounds (Django's current default is 1,200,000). The largest each platform writes
    /// by default (argon2-cffi's m=65536,t=3,p=4, Ory Kratos's 128 MiB, Keycloak's, Supabase's bcrypt 10) is within.
    public enum ImportBounds {
        public static let argon2MemoryKiB: UInt32 = 128 * 1024
        /// Memory × passes, in KiB: the time a verification takes grows with both.
        public static let argon2Work: UInt64 = 4 * 128 * 1024
        public static let argon2Lanes: ClosedRange<UInt32> = 1...8
        public static let bcryptCost = 13
        public static let pbkdf2Rounds: ClosedRange<Int> = 1_000...2_000_000
    }

    /// Reads a hash an operator imports, refusing one whose cost would stall sign-ins (``ImportBounds``). The answer
    /// is the refusal's reason.
    public static func imported(_ encoded: String) -> Result<PasswordHash, ImportRefusal> {
        guard let hash = PasswordHash(encoded: encoded) else { return .failure(.unreadable) }
        switch hash.scheme {
        case .argon2id:
            guard let parameters = hash.parameters, parameters.memoryKiB <= ImportBounds.argon2MemoryKiB, parameters.iterations >= 1,
                  UInt64(parameters.memoryKiB) * UInt64(parameters.iterations) <= ImportBounds.argon2Work,
                  ImportBounds.argon2Lanes.contains(parameters.parallelism)
            else { return .failure(.tooCostly) }
        case .bcrypt:
            // `$2b$<cost>$…`: the cost was read as 4 to 31.
            let cost = encoded.split(separator: "$", omittingEmptySubsequences: false)[2]
            guard let value = Int(cost), value <= ImportBounds.bcryptCost else { return .failure(.tooCostly) }
        case .pbkdf2SHA256:
            guard let rounds = hash.pbkdf2?.rounds, ImportBounds.pbkdf2Rounds.contains(rounds) else { return .failure(.tooCostly) }
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
                "The password hash's cost is beyond what a sign-in may cost here (argon2id: m ≤ 131072 KiB, m·t ≤ 524288, p ≤ 8; bcrypt: cost ≤ 13; PBKDF2: ≤ 2,000,000 rounds); the owner sets a new password through a reset instead."
            }
        }
    }
}

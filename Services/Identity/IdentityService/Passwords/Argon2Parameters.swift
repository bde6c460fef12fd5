/// The cost of one argon2id hash. Stored with every hash (in its PHC string), so they can be raised later: a hash
/// made with other parameters verifies as before and is rehashed at the next successful login.
public struct Argon2Parameters: Sendable, Hashable, CustomStringConvertible {
    /// Memory in KiB (`m`).
    public var memoryKiB: UInt32
    /// Passes over the memory (`t`).
    public var iterations: UInt32
    /// Lanes (`p`); libargon2 computes them on as many threads of its own.
    public var parallelism: UInt32
    public var saltLength: Int
    public var hashLength: Int

    /// OWASP's minimum for argon2id: 19 MiB, 2 passes, 1 lane.
    public static let owaspMinimum = Argon2Parameters(memoryKiB: 19 * 1024, iterations: 2, parallelism: 1)

    public init(memoryKiB: UInt32, iterations: UInt32, parallelism: UInt32, saltLength: Int = 16, hashLength: Int = 32) {
        self.memoryKiB = memoryKiB
        self.iterations = iterations
        self.parallelism = parallelism
        self.saltLength = saltLength
        self.hashLength = hashLength
    }

    /// What the PHC string records: `m=…,t=…,p=…`.
    public var description: String {
        "m=\(memoryKiB),t=\(iterations),p=\(parallelism)"
    }
}

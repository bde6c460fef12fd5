import KontoModel
import KontoContracts
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// Runs password hashing on a few threads of its own, never on an event loop, with a bounded queue.
///
/// A hash takes tens of milliseconds of CPU and megabytes of memory, so a login flood must not queue without bound:
/// once `threads + maxQueued` calls are admitted, further calls fail at once with the retryable `identity.busy`.
/// Unknown users are checked against a dummy hash with the same parameters (``verify(_:against:)`` with `nil`), so
/// they cost what a wrong password costs.
public final class PasswordHashingPool: Service, Sendable {
    public struct Configuration: Sendable {
        public var parameters: Argon2Parameters
        /// Hashing threads; by default one per core.
        public var threads: Int
        /// Calls that may wait for a thread; beyond them, `identity.busy`.
        public var maxQueued: Int

        public init(parameters: Argon2Parameters = .owaspMinimum, threads: Int = System.coreCount, maxQueued: Int = 64) {
            self.parameters = parameters
            self.threads = max(1, threads)
            self.maxQueued = max(0, maxQueued)
        }
    }

    /// The longest password accepted, in characters (Unicode scalars, as JSON Schema's `maxLength` counts them, so
    /// the HTTP API's document states the same limit): callers refuse longer ones before any work on them.
    public static let maximumPasswordCharacters = 1_024
    /// Passwords longer than this many UTF-8 bytes are never hashed (at most four per character): the pool refuses
    /// them too, so a 10 MB "password" costs nothing.
    public static let maximumPasswordBytes = 4 * maximumPasswordCharacters

    /// Whether `password` is within ``maximumPasswordCharacters``.
    public static func acceptsLength(of password: SecretString) -> Bool {
        password.utf8Count <= maximumPasswordBytes && password.value.unicodeScalars.count <= maximumPasswordCharacters
    }

    public let hasher: PasswordHasher
    private let configuration: Configuration
    private let threadPool: NIOThreadPool
    private let admitted = Atomic<Int>(0)
    private let dummy: PasswordHash

    /// Starts the threads and makes the dummy hash (one hash's time).
    public init(configuration: Configuration = Configuration()) throws(PasswordHashingError) {
        self.configuration = configuration
        self.hasher = PasswordHasher(parameters: configuration.parameters)
        self.dummy = try hasher.hash("konto-dummy-password-\(UInt64.random(in: 0 ... .max))")
        self.threadPool = NIOThreadPool(numberOfThreads: configuration.threads)
        self.threadPool.start()
    }

    /// Calls admitted and not finished (running or queued).
    public var load: Int { admitted.load(ordering: .relaxed) }

    /// A new hash of `password`.
    public func hash(_ password: String) async throws -> PasswordHash {
        try Self.checkLength(password)
        let hasher = self.hasher
        return try await submit { try hasher.hash(password) }
    }

    /// Whether `password` matches `hash`; with `nil` (no such user) it verifies against the dummy hash, taking the
    /// same time, and answers false.
    public func verify(_ password: String, against hash: PasswordHash?) async throws -> Bool {
        try Self.checkLength(password)
        let hasher = self.hasher
        let target = hash ?? dummy
        let matches = try await submit { hasher.verify(password, against: target) }
        return matches && hash != nil
    }

    public func run() async throws {
        try? await gracefulShutdown()
        try await threadPool.shutdownGracefully()
    }

    private static func checkLength(_ password: String) throws(PasswordTooLong) {
        guard password.utf8.count <= maximumPasswordBytes else { throw PasswordTooLong() }
    }

    func submit<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let limit = configuration.threads + configuration.maxQueued
        guard admitted.wrappingAdd(1, ordering: .relaxed).newValue <= limit else {
            admitted.wrappingSubtract(1, ordering: .relaxed)
            throw ServiceError.identityBusy
        }
        defer { admitted.wrappingSubtract(1, ordering: .relaxed) }
        return try await threadPool.runIfActive(body)
    }
}

/// A password over ``PasswordHashingPool/maximumPasswordBytes``, refused without hashing.
public struct PasswordTooLong: Error, Sendable, CustomStringConvertible {
    public var description: String { "password longer than \(PasswordHashingPool.maximumPasswordBytes) bytes" }
}

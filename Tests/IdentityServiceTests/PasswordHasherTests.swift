import Foundation
@testable import IdentityService
import KontoContracts
import KontoErrors
import Synchronization
import Testing

@Suite("Password hashing (argon2id)")
struct PasswordHasherTests {
    /// Cheap parameters for tests that hash many times; the OWASP minimum is checked on its own.
    static let cheap = Argon2Parameters(memoryKiB: 1_024, iterations: 1, parallelism: 1)

    @Test("a hash is a PHC string with the parameters, verifies its password and nothing else")
    func hashAndVerify() throws {
        let hasher = PasswordHasher(parameters: .owaspMinimum)
        let hash = try hasher.hash("correct horse battery staple")
        #expect(hash.encoded.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"))
        #expect(hash.parameters == .owaspMinimum)
        #expect(hasher.verify("correct horse battery staple", against: hash))
        #expect(!hasher.verify("correct horse battery stapler", against: hash))
        #expect(!hasher.verify("", against: hash))
        // A fresh salt each time.
        #expect(try hasher.hash("correct horse battery staple").encoded != hash.encoded)
    }

    @Test("a hash made elsewhere with the reference implementation verifies (argon2's own test vector)")
    func referenceVector() throws {
        // `echo -n password | argon2 somesalt -id -t 2 -m 16 -p 1 -l 32 -e`
        let hash = try #require(PasswordHash(encoded: "$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc"))
        #expect(hash.parameters == Argon2Parameters(memoryKiB: 65_536, iterations: 2, parallelism: 1, saltLength: 8, hashLength: 32))
        let hasher = PasswordHasher(parameters: Self.cheap)
        #expect(hasher.verify("password", against: hash))
        #expect(!hasher.verify("Password", against: hash))
        // Other parameters than the current ones: rehash at the next login.
        #expect(hasher.needsRehash(hash))
    }

    @Test("a hash made with the current parameters needs no rehash; one with older parameters does")
    func rehash() throws {
        let old = try PasswordHasher(parameters: Self.cheap).hash("secret password")
        let current = PasswordHasher(parameters: Argon2Parameters(memoryKiB: 2_048, iterations: 1, parallelism: 1))
        #expect(current.needsRehash(old))
        #expect(current.verify("secret password", against: old))
        #expect(!current.needsRehash(try current.hash("secret password")))
    }

    @Test("anything but a readable argon2id v19 PHC string is refused", arguments: [
        "",
        "plaintext",
        "$argon2i$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc",
        "$argon2id$v=16$m=65536,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc",
        "$argon2id$v=19$m=65536,t=2$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc",
        "$argon2id$v=19$m=65536,t=2,p=1,p=2$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc",
        "$argon2id$v=19$m=65536,t=2,x=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc",
        "$argon2id$v=19$m=-1,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc",
        "$argon2id$v=19$m=65536,t=2,p=1$$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc",
        "$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$",
        "$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc$extra",
    ])
    func refused(_ encoded: String) {
        #expect(PasswordHash(encoded: encoded) == nil)
    }

    @Test("parameters libargon2 cannot use are an error, not a crash")
    func badParameters() {
        let hasher = PasswordHasher(parameters: Argon2Parameters(memoryKiB: 1, iterations: 0, parallelism: 1))
        #expect(throws: PasswordHashingError.self) { try hasher.hash("x") }
    }
}

@Suite("Password hashing pool")
struct PasswordHashingPoolTests {
    static func pool(threads: Int, maxQueued: Int) throws -> PasswordHashingPool {
        try PasswordHashingPool(configuration: .init(parameters: PasswordHasherTests.cheap, threads: threads, maxQueued: maxQueued))
    }

    @Test("hashes and verifies off the caller's thread; an unknown user (nil) verifies false")
    func hashAndVerify() async throws {
        let pool = try Self.pool(threads: 2, maxQueued: 8)
        let hash = try await pool.hash("long enough password")
        #expect(try await pool.verify("long enough password", against: hash))
        #expect(try await !pool.verify("wrong password", against: hash))
        #expect(try await !pool.verify("long enough password", against: nil))
    }

    @Test("a password over 1,024 bytes is refused without hashing")
    func tooLong() async throws {
        let pool = try Self.pool(threads: 1, maxQueued: 0)
        let huge = String(repeating: "x", count: 10 * 1024)
        await #expect(throws: PasswordTooLong.self) { try await pool.hash(huge) }
        await #expect(throws: PasswordTooLong.self) { try await pool.verify(huge, against: nil) }
        #expect(pool.load == 0)
        // Exactly at the limit is hashed.
        _ = try await pool.hash(String(repeating: "x", count: PasswordHashingPool.maximumPasswordBytes))
    }

    @Test("with every thread busy and the queue full, a call fails at once with the retryable identity.busy")
    func busy() async throws {
        let pool = try Self.pool(threads: 1, maxQueued: 1)
        let gate = ThreadGate()
        // One job holds the only thread, one waits in the queue.
        let running = Task { try await pool.submit { gate.wait() } }
        let queued = Task { try await pool.submit { gate.wait() } }
        try await waitUntil(timeout: .seconds(30)) { pool.load == 2 }
        let error = await #expect(throws: ServiceError.self) { try await pool.hash("a password") }
        #expect(error?.code == KontoErrorCode.identityBusy)
        #expect(error?.isRetryable == true)
        gate.open()
        try await running.value
        try await queued.value
        #expect(pool.load == 0)
        _ = try await pool.hash("a password")
    }
}

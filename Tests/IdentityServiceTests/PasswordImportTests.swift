import Foundation
@testable import IdentityService
import KontoContracts
import KontoModel
import KontoTestSupport
import Testing

/// Password hashes imported from another system (docs/ADMIN.md, "Importing accounts"): made here by the libraries
/// those systems use (PyPI's `bcrypt`, `argon2-cffi`, passlib's PBKDF2-SHA256 and the standard library's
/// `hashlib.pbkdf2_hmac` in the PHC form), verified by Konto and marked for a rehash to its own argon2id.
@Suite("Password hashes imported from elsewhere")
struct PasswordImportTests {
    static let python = ProcessInfo.processInfo.environment["KONTO_HASHES_PYTHON"]
    static let onCI = ProcessInfo.processInfo.environment["CI"] != nil

    /// One hash of `password` per foreign maker, in this order: bcrypt ($2b$, cost 10), argon2-cffi (its defaults),
    /// passlib pbkdf2_sha256, PHC pbkdf2-sha256 from hashlib, bcrypt $2a$ and $2y$ (same hash, other prefixes).
    static func foreignHashes(of password: String) async throws -> [String] {
        let python = try #require(python)
        let script = """
            import base64, hashlib, os, sys, bcrypt, argon2
            from passlib.hash import pbkdf2_sha256
            password = sys.argv[1].encode()
            b = bcrypt.hashpw(password, bcrypt.gensalt(rounds=10)).decode()
            print(b)
            print(argon2.PasswordHasher().hash(password))
            print(pbkdf2_sha256.using(rounds=29000).hash(password))
            salt = os.urandom(16)
            digest = hashlib.pbkdf2_hmac("sha256", password, salt, 600000)
            b64 = lambda data: base64.b64encode(data).decode().rstrip("=")
            print(f"$pbkdf2-sha256$i=600000,l=32${b64(salt)}${b64(digest)}")
            print("$2a$" + b[4:])
            print("$2y$" + b[4:])
            """
        let run = try await ServiceProcess.run(python, arguments: ["-c", script, password])
        #expect(run.status == 0, "\(run.standardError)")
        return run.standardOutput.split(separator: "\n").map(String.init)
    }

    @Test("hashes made by bcrypt, argon2-cffi, passlib and hashlib verify their password and nothing else, and are rehashed", .enabled(if: python != nil || onCI, "KONTO_HASHES_PYTHON is not set (scripts/test.sh sets it)"))
    func foreignMakers() async throws {
        guard Self.python != nil else {
            Issue.record("CI is set, but KONTO_HASHES_PYTHON is not: CI runs the tests through scripts/test.sh, which installs the hash makers and sets it")
            return
        }
        let password = "Tr0ub4dor&3 ünïcode"
        let hashes = try await Self.foreignHashes(of: password)
        #expect(hashes.count == 6)
        let hasher = PasswordHasher(parameters: PasswordHasherTests.cheap)
        let schemes: [PasswordHash.Scheme] = [.bcrypt, .argon2id, .pbkdf2SHA256, .pbkdf2SHA256, .bcrypt, .bcrypt]
        for (encoded, scheme) in zip(hashes, schemes) {
            let hash = try #require(PasswordHash(encoded: encoded), "\(encoded)")
            #expect(hash.scheme == scheme, "\(encoded)")
            #expect(hasher.verify(password, against: hash), "\(encoded)")
            #expect(!hasher.verify(password + "!", against: hash), "\(encoded)")
            #expect(!hasher.verify(String(password.dropLast()), against: hash), "\(encoded)")
            #expect(!hasher.verify("", against: hash), "\(encoded)")
            // Never kept as it came: the first success stores Konto's argon2id instead.
            #expect(hasher.needsRehash(hash), "\(encoded)")
        }
        // A NUL ends bcrypt's C string: what follows it would not count, so such a password never matches.
        let bcrypt = try #require(PasswordHash(encoded: hashes[0]))
        #expect(!hasher.verify(password + "\u{0}suffix", against: bcrypt))
    }

    @Test("bcrypt and PBKDF2 strings that are not well formed are refused", arguments: [
        "$2b$10$short",
        "$2b$3$LJwEItx6gQTMYxSM2i.PIuzy3CLoj3A3sKVfJfppgoauDP69J0glC",
        "$2b$32$LJwEItx6gQTMYxSM2i.PIuzy3CLoj3A3sKVfJfppgoauDP69J0glC",
        "$2x$10$LJwEItx6gQTMYxSM2i.PIuzy3CLoj3A3sKVfJfppgoauDP69J0glC",
        "$2b$10$LJwEItx6gQTMYxSM2i.PIuzy3CLoj3A3sKVfJfppgoauDP69J0gl!",
        "$pbkdf2-sha256$999$c2FsdHNhbHRzYWx0c2FsdA$MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY",
        "$pbkdf2-sha256$i=20000000$c2FsdHNhbHRzYWx0c2FsdA$MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY",
        "$pbkdf2-sha256$i=600000,l=16$c2FsdHNhbHRzYWx0c2FsdA$MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY",
        "$pbkdf2-sha256$i=600000,x=1$c2FsdHNhbHRzYWx0c2FsdA$MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY",
        "$pbkdf2-sha256$i=600000$$MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY",
        "$pbkdf2-sha256$i=600000$c2FsdHNhbHRzYWx0c2FsdA$MDEy",
        "$pbkdf2-sha256$i=600000$c2FsdHNhbHRzYWx0c2FsdA==$MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY",
        "$pbkdf2-sha512$i=600000$c2FsdHNhbHRzYWx0c2FsdA$MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY",
        "$1$saltsalt$qjXMvbEw8oaL.CzflDugX/",
        "$6$saltsalt$qjXMvbEw8oaL.CzflDugX/",
    ])
    func refused(_ encoded: String) {
        #expect(PasswordHash(encoded: encoded) == nil)
    }

    @Test("a PBKDF2 hash computed here in the PHC form verifies (RFC 7914's PBKDF2-HMAC-SHA256 test vector)")
    func pbkdf2Vector() throws {
        // RFC 7914 section 11: P = "passwd", S = "salt", c = 1 would be below the floor; the second vector: P =
        // "Password", S = "NaCl", c = 80000, dkLen = 64.
        let digest = "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d"
        let bytes = stride(from: 0, to: digest.count, by: 2).map { UInt8(digest.dropFirst($0).prefix(2), radix: 16)! }
        let encoded = "$pbkdf2-sha256$i=80000,l=64$" + Data("NaCl".utf8).base64EncodedString().replacingOccurrences(of: "=", with: "") + "$"
            + Data(bytes).base64EncodedString().replacingOccurrences(of: "=", with: "")
        let hash = try #require(PasswordHash(encoded: encoded))
        let hasher = PasswordHasher(parameters: PasswordHasherTests.cheap)
        #expect(hasher.verify("Password", against: hash))
        #expect(!hasher.verify("password", against: hash))
    }

    @Test("an account an operator made with an imported hash signs in with its password, and then holds Konto's argon2id instead", .enabled(if: python != nil || onCI, "KONTO_HASHES_PYTHON is not set (scripts/test.sh sets it)"), arguments: IdentityStorageKind.allCases)
    func signInRehashes(kind: IdentityStorageKind) async throws {
        guard Self.python != nil else {
            Issue.record("CI is set, but KONTO_HASHES_PYTHON is not: CI runs the tests through scripts/test.sh, which installs the hash makers and sets it")
            return
        }
        let password = "imported password 1"
        let hashes = try await Self.foreignHashes(of: password)
        try await kind.withStorage { storage in
            let fixture = try await IdentityStoreAccountCreationTests.fixture(storage: storage)
            for (index, imported) in hashes.prefix(4).enumerated() {
                let userId = "imported\(index)@example.org"
                // As an import makes it (identity.createAccount): the other system's hash, stored as it came.
                let made = try await fixture.store.createAccount(IdentityStoreAccountCreationTests.request(userId, hash: imported))
                let accountId = made.record.facts.accountId
                #expect(try await storage.credential(accountId: accountId)?.passwordHash == imported)
                // An address per account: the fixture throttles an address after three failures.
                let address = "192.0.2.\(10 + index)"
                let wrong = await identityError { try await fixture.login(userId, password: password + "?", address: address) }
                #expect(wrong?.code == .wrongCredentials, "\(imported)")
                let session = try await fixture.login(userId, password: password, address: address)
                #expect(session.accountId == accountId)
                let stored = try #require(try await storage.credential(accountId: accountId)?.passwordHash)
                #expect(stored.hasPrefix("$argon2id$v=19$m=1024,t=1,p=1$") && stored != imported, "\(stored)")
                // The same password still signs in, now against the new hash.
                _ = try await fixture.login(userId, password: password, address: address)
            }
        }
    }
}

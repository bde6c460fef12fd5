import Foundation
@testable import IdentityService
import KontoContracts
import KontoModel
import PostgresNIO
import Testing

/// The audit chain against someone who writes to the database behind Identity's back (docs/ADMIN.md, "Tamper
/// evidence"): each change is found at its position by the verification.
@Suite("Identity storage: audit log tampering (PostgreSQL)")
struct IdentityStorageAuditTamperTests {
    typealias Operators = IdentityStoreOperatorTests

    /// Ten sealed entries (positions 1–10) in one fresh database; `body` gets a verification after each tamper run as
    /// SQL, the log and its chain restored from a copy between them (a database per case cost CI seconds each).
    func withChain(_ body: (_ verification: (String) async throws -> IdentityAuditVerification) async throws -> Void) async throws {
        try await IdentityStorageKind.postgres.withStorage { storage in
            let postgres = try #require(storage as? PostgresIdentityStorage)
            let fixture = try Operators.fixture(storage: storage)
            try await fixture.store.installBootstrapOperatorKey()
            for index in 0..<10 {
                try await storage.appendAudit([AuditRecord(
                    occurredAt: Timestamp(milliseconds: 1_700_000_000_000 + Int64(index)), accountId: "acct-\(index)", actorType: .account,
                    actorId: "acct-\(index)", type: "signIn.failed", operation: "login", facts: ["reason": "wrongPassword"],
                    personal: ["clientAddress": "192.0.2.\(index)"]
                )])
            }
            #expect(try await storage.sealAudit(limit: 100) == 10)
            #expect(try await IdentityStoreAuditTests.verify(fixture).intact)
            func run(_ statements: String) async throws {
                for statement in statements.split(separator: ";") {
                    try await postgres.client.query(PostgresQuery(unsafeSQL: String(statement)), logger: IdentityStorageKind.logger)
                }
            }
            try await run("CREATE TABLE public.audit_log_copy AS TABLE identity.audit_log; CREATE TABLE public.audit_chain_copy AS TABLE identity.audit_chain")
            try await body { tamper in
                try await run(tamper)
                let result = try await IdentityStoreAuditTests.verify(fixture)
                try await run("""
                    DELETE FROM identity.audit_log; INSERT INTO identity.audit_log SELECT * FROM public.audit_log_copy;
                    DELETE FROM identity.audit_chain; INSERT INTO identity.audit_chain SELECT * FROM public.audit_chain_copy
                    """)
                #expect(try await IdentityStoreAuditTests.verify(fixture).intact, "restored after \(tamper)")
                return result
            }
        }
    }

    @Test("a changed fact, type, time, actor or account is found where it was changed")
    func changedFields() async throws {
        try await withChain { verification in
            for tamper in [
                "UPDATE identity.audit_log SET facts = '{\"reason\":\"unknownUser\"}' WHERE position = 4",
                "UPDATE identity.audit_log SET type = 'signIn.succeeded' WHERE position = 4",
                "UPDATE identity.audit_log SET occurred_at = occurred_at + interval '1 second' WHERE position = 4",
                "UPDATE identity.audit_log SET actor_type = 'system' WHERE position = 4",
                "UPDATE identity.audit_log SET actor_type = 'nobody' WHERE position = 4",
                "UPDATE identity.audit_log SET account_id = 'acct-9' WHERE position = 4",
            ] {
                let result = try await verification(tamper)
                #expect(!result.intact && result.brokenAt == 4 && result.problem == "The entry was changed.", "\(tamper)")
            }
        }
    }

    @Test("changed personal data is found; erased personal data is not a change")
    func personalData() async throws {
        try await withChain { verification in
            let changed = try await verification("UPDATE identity.audit_log SET personal = replace(personal, '192.0.2.6', '192.0.2.66') WHERE position = 7")
            #expect(!changed.intact && changed.brokenAt == 7 && changed.problem == "The entry's personal data was changed.")
            let erased = try await verification("UPDATE identity.audit_log SET personal = NULL WHERE position = 7")
            #expect(erased.intact)
        }
    }

    @Test("a removed entry is found at its place; a removed tail by the head; moved positions by their hashes")
    func removals() async throws {
        try await withChain { verification in
            let middle = try await verification("DELETE FROM identity.audit_log WHERE position = 6")
            #expect(!middle.intact && middle.brokenAt == 6 && middle.problem == "The entry at this position is missing.")
            let first = try await verification("DELETE FROM identity.audit_log WHERE position = 1")
            #expect(!first.intact && first.brokenAt == 1)
            let tail = try await verification("DELETE FROM identity.audit_log WHERE position >= 9")
            #expect(!tail.intact && tail.brokenAt == 9)
        }
        // Closing the gap by renumbering does not hide it: the hashes cover the positions. (A chain of its own: the
        // renumbered positions meet those the restores' own audit entries were sealed at.)
        try await withChain { verification in
            let renumbered = try await verification("""
                DELETE FROM identity.audit_log WHERE position = 5;
                UPDATE identity.audit_log SET position = -position WHERE position > 5;
                UPDATE identity.audit_log SET position = -position - 1 WHERE position < 0;
                UPDATE identity.audit_chain SET head_position = 9
                """)
            #expect(!renumbered.intact && renumbered.brokenAt == 5)
        }
    }
}

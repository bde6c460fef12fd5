import Foundation
import KontoTestSupport
import PostgresNIO

extension EndToEndSystem {
    /// Every table of every schema of the system's database (PostgreSQL's own catalogs left out), as `schema.table`.
    func allTables() async throws -> [(schema: String, table: String)] {
        let rows = try await strings("""
            SELECT table_schema || '.' || table_name FROM information_schema.tables
            WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')
            ORDER BY 1
            """)
        return rows.map { name in
            let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }
    }

    /// The tables (`schema.table: rows`) with a row whose text holds `needle`, in any column: as text, or as the hex
    /// a bytea column shows (case-insensitively, for a marker in an email address whose case was folded).
    func tablesContaining(_ needle: String) async throws -> [String] {
        let tables = try await allTables()
        let hex = needle.utf8.map { String(format: "%02x", $0) }.joined()
        return try await withDatabase { client in
            var found: [String] = []
            for (schema, table) in tables {
                let quoted = "\"\(schema.replacingOccurrences(of: "\"", with: "\"\""))\".\"\(table.replacingOccurrences(of: "\"", with: "\"\""))\""
                var binds = PostgresBindings()
                binds.append(needle.lowercased())
                binds.append(hex)
                let query = PostgresQuery(
                    unsafeSQL: "SELECT count(*) FROM \(quoted) AS t WHERE strpos(lower(t::text), $1) > 0 OR strpos(lower(t::text), $2) > 0",
                    binds: binds
                )
                for try await count in try await client.query(query, logger: Self.logger).decode(Int.self) where count > 0 {
                    found.append("\(schema).\(table): \(count)")
                }
            }
            return found
        }
    }

    /// The rows (as `row_to_json`) holding `needle` the way ``tablesContaining(_:)`` finds them, by `schema.table`.
    func rowsContaining(_ needle: String) async throws -> [(table: String, row: [String: Any])] {
        let tables = try await allTables()
        let hex = needle.utf8.map { String(format: "%02x", $0) }.joined()
        let found: [(String, String)] = try await withDatabase { client in
            var found: [(String, String)] = []
            for (schema, table) in tables {
                let quoted = "\"\(schema.replacingOccurrences(of: "\"", with: "\"\""))\".\"\(table.replacingOccurrences(of: "\"", with: "\"\""))\""
                var binds = PostgresBindings()
                binds.append(needle.lowercased())
                binds.append(hex)
                let query = PostgresQuery(
                    unsafeSQL: "SELECT row_to_json(t)::text FROM \(quoted) AS t WHERE strpos(lower(t::text), $1) > 0 OR strpos(lower(t::text), $2) > 0",
                    binds: binds
                )
                for try await row in try await client.query(query, logger: Self.logger).decode(String.self) {
                    found.append(("\(schema).\(table)", row))
                }
            }
            return found
        }
        return found.map { table, text in (table, ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]) ?? [:]) }
    }

    /// Every service's whole log so far.
    func logs() -> String {
        stack.logTails(lines: Int.max)
    }
}

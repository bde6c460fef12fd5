import Foundation

/// Where the PostgreSQL server programs (initdb, pg_ctl) live on this machine.
///
/// Debian installs them under `/usr/lib/postgresql/<major>/bin`, outside `PATH`, so the usual
/// places are searched after `KONTO_PG_BINDIR` and `PATH`.
struct PostgresBinaries: Sendable {
    let directory: URL

    var initdb: String { directory.appendingPathComponent("initdb").path }
    var pgCtl: String { directory.appendingPathComponent("pg_ctl").path }

    static func locate(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        debianRoot: String = "/usr/lib/postgresql"
    ) throws -> PostgresBinaries {
        var candidates: [String] = []
        if let configured = environment["KONTO_PG_BINDIR"], !configured.isEmpty {
            candidates.append(configured)
        }
        candidates += (environment["PATH"] ?? "").split(separator: ":").map(String.init)
        candidates += debianVersionDirectories(root: debianRoot)

        let fileManager = FileManager.default
        for candidate in candidates {
            let directory = URL(fileURLWithPath: candidate)
            let binaries = PostgresBinaries(directory: directory)
            if fileManager.isExecutableFile(atPath: binaries.initdb), fileManager.isExecutableFile(atPath: binaries.pgCtl) {
                return binaries
            }
        }
        throw KontoTestingError(
            .binariesNotFound,
            "initdb and pg_ctl not found in KONTO_PG_BINDIR, PATH or /usr/lib/postgresql/*/bin; install Debian's postgresql package"
        )
    }

    /// Newest major version first.
    private static func debianVersionDirectories(root: String) -> [String] {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions
            .compactMap { Int($0) }
            .sorted(by: >)
            .map { "\(root)/\($0)/bin" }
    }
}

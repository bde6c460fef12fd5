import KontoContracts
import KontoWire

extension ProfileStore {
    /// Serves the Profile contract (and the health check) on `server`. Register before running it.
    ///
    /// Create and modify decode up to a whole account of JSON and run the deployment's validation rules on it, so
    /// they run on the global executor; loads, deletes and health checks only await the database and may stay on
    /// the connection's event loop (when the server is configured so).
    public func register(on server: WireServer) {
        server.register(ProfileContract.create, execution: .globalExecutor) { request, _ in
            let created = try await self.create(accountId: request.accountId, details: request.details)
            return ProfileRecord(accountId: request.accountId, details: created.details, version: created.version)
        }
        server.register(ProfileContract.load) { request, _ in
            let loaded = try await self.load(accountId: request.accountId, keys: request.keys)
            return ProfileRecord(accountId: request.accountId, details: loaded.details, version: loaded.version)
        }
        server.register(ProfileContract.modify, execution: .globalExecutor) { request, _ in
            let modified = try await self.modify(
                accountId: request.accountId,
                modifications: request.modifications,
                expectedVersion: request.expectedVersion
            )
            return ProfileRecord(accountId: request.accountId, details: modified.details, version: modified.version)
        }
        server.register(ProfileContract.delete) { request, _ in
            ProfileDeletion(accountId: request.accountId, deleted: try await self.delete(accountId: request.accountId))
        }
        server.register(HealthContract.check) { _, _ in
            await self.healthReport()
        }
    }

    /// Readiness: the database answers within the operation timeout.
    public func healthReport() async -> HealthReport {
        let database: HealthReport.Check
        do {
            try await checkHealth()
            database = .init(name: "storage", status: .ready)
        } catch {
            database = .init(name: "storage", status: .notReady, message: error.code.rawValue)
        }
        return HealthReport(service: ProfileContract.serviceName, checks: [database])
    }
}

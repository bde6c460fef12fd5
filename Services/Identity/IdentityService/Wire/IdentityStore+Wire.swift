import KontoContracts
import KontoWire

extension IdentityStore {
    /// Serves the Identity contract (and the health check) on `server`. Register before running it.
    ///
    /// Every method awaits the storage, Profile or the hashing pool and never computes on the event loop itself
    /// (hashing runs on the pool's threads); sign-up validates a whole account against the deployment's rules, so it
    /// runs on the global executor.
    public func register(on server: WireServer) {
        server.register(IdentityContract.signUp, execution: .globalExecutor) { request, _ in try await self.signUp(request) }
        server.register(IdentityContract.signInAnonymously) { request, _ in try await self.signInAnonymously(request) }
        server.register(IdentityContract.login) { request, _ in try await self.login(request) }
        server.register(IdentityContract.validateSession) { request, _ in try await self.validateSession(request) }
        server.register(IdentityContract.logout) { request, _ in try await self.logout(request) }
        server.register(IdentityContract.logoutEverywhere) { request, _ in try await self.logoutEverywhere(request) }
        server.register(IdentityContract.reauthenticate) { request, _ in try await self.reauthenticate(request) }
        server.register(IdentityContract.changePassword) { request, _ in try await self.changePassword(request) }
        server.register(IdentityContract.changeUserId) { request, _ in try await self.changeUserId(request) }
        server.register(IdentityContract.requestPasswordReset) { request, _ in try await self.requestPasswordReset(request) }
        server.register(IdentityContract.confirmPasswordReset) { request, _ in try await self.confirmPasswordReset(request) }
        server.register(IdentityContract.delete) { request, _ in try await self.delete(request) }
        server.register(HealthContract.check) { _, _ in await self.healthReport() }
    }

    /// Readiness: the storage answers.
    public func healthReport() async -> HealthReport {
        let check: HealthReport.Check
        do {
            try await storage.checkHealth()
            check = .init(name: "storage", status: .ready)
        } catch {
            check = .init(name: "storage", status: .notReady, message: error.code.rawValue)
        }
        return HealthReport(service: IdentityContract.serviceName, checks: [check])
    }
}

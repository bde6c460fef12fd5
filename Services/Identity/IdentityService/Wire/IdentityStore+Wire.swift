import KontoContracts
import KontoModel
import KontoWire

extension IdentityStore {
    /// Serves the Identity contract (and the health check) on `server`. Register before running it.
    ///
    /// Session validation, the path of every authenticated call, only hashes a token and awaits one lookup: it stays
    /// on the connection's event loop and saves the hops to and from the global executor. The others run on the
    /// global executor (sign-up validates a whole account against the deployment's rules); password hashing runs on
    /// the pool's threads either way.
    public func register(on server: WireServer) {
        server.register(IdentityContract.signUp, execution: .globalExecutor) { request, _ in try await self.signUp(request) }
        server.register(IdentityContract.signInAnonymously) { request, _ in try await self.signInAnonymously(request) }
        server.register(IdentityContract.login) { request, _ in try await self.login(request) }
        server.register(IdentityContract.validateSession, execution: .eventLoop) { request, _ in try await self.validateSession(request) }
        server.register(IdentityContract.logout) { request, _ in try await self.logout(request) }
        server.register(IdentityContract.logoutEverywhere) { request, _ in try await self.logoutEverywhere(request) }
        server.register(IdentityContract.listSessions) { request, _ in try await self.listSessions(request) }
        server.register(IdentityContract.endSession) { request, _ in try await self.endSession(request) }
        server.register(IdentityContract.endOtherSessions) { request, _ in try await self.endOtherSessions(request) }
        server.register(IdentityContract.mailPreferences) { request, _ in try await self.mailPreferences(request) }
        server.register(IdentityContract.setMailPreferences) { request, _ in try await self.setMailPreferences(request) }
        server.register(IdentityContract.openIDKeys) { request, _ in self.openIDKeys(request) }
        server.register(IdentityContract.openIDAuthorize) { request, _ in try await self.openIDAuthorize(request) }
        server.register(IdentityContract.openIDLogout) { request, _ in try await self.openIDLogout(request) }
        server.register(IdentityContract.openIDToken) { request, _ in try await self.openIDToken(request) }
        server.register(IdentityContract.openIDAccessToken) { request, _ in try await self.openIDAccessToken(request) }
        server.register(IdentityContract.openIDIntrospect) { request, _ in try await self.openIDIntrospect(request) }
        server.register(IdentityContract.openIDRevoke) { request, _ in try await self.openIDRevoke(request) }
        server.register(IdentityContract.openIDApplications) { request, _ in try await self.openIDApplications(request) }
        server.register(IdentityContract.revokeOpenIDApplication) { request, _ in try await self.revokeOpenIDApplication(request) }
        server.register(IdentityContract.exportAccount) { request, _ in try await self.exportAccount(request) }
        server.register(IdentityContract.reauthenticate) { request, _ in try await self.reauthenticate(request) }
        server.register(IdentityContract.changePassword) { request, _ in try await self.changePassword(request) }
        server.register(IdentityContract.changeUserId) { request, _ in try await self.changeUserId(request) }
        server.register(IdentityContract.requestPasswordReset) { request, _ in try await self.requestPasswordReset(request) }
        server.register(IdentityContract.confirmPasswordReset) { request, _ in try await self.confirmPasswordReset(request) }
        server.register(IdentityContract.requestEmailVerification) { request, _ in try await self.requestEmailVerification(request) }
        server.register(IdentityContract.confirmEmailVerification) { request, _ in try await self.confirmEmailVerification(request) }
        server.register(IdentityContract.confirmEmailVerificationCode) { request, _ in try await self.confirmEmailVerificationCode(request) }
        server.register(IdentityContract.requestEmailCode) { request, _ in try await self.requestEmailCode(request) }
        server.register(IdentityContract.emailCodeLogin) { request, _ in try await self.emailCodeLogin(request) }
        server.register(IdentityContract.delete) { request, _ in try await self.delete(request) }
        server.register(IdentityContract.completeSecondFactor) { request, _ in try await self.completeSecondFactor(request) }
        server.register(IdentityContract.listFactors) { request, _ in try await self.listFactors(request) }
        server.register(IdentityContract.enrollTOTP) { request, _ in try await self.enrollTOTP(request) }
        server.register(IdentityContract.confirmTOTP) { request, _ in try await self.confirmTOTP(request) }
        server.register(IdentityContract.removeFactor) { request, _ in try await self.removeFactor(request) }
        server.register(IdentityContract.regenerateRecoveryCodes) { request, _ in try await self.regenerateRecoveryCodes(request) }
        server.register(IdentityContract.passkeyRegistrationOptions) { request, _ in try await self.passkeyRegistrationOptions(request) }
        server.register(IdentityContract.registerPasskey) { request, _ in try await self.registerPasskey(request) }
        server.register(IdentityContract.passkeyLoginOptions, execution: .eventLoop) { request, _ in self.passkeyLoginOptions(request) }
        server.register(IdentityContract.passkeyLogin) { request, _ in try await self.passkeyLogin(request) }
        server.register(IdentityContract.externalLogin) { request, _ in try await self.externalLogin(request) }
        server.register(IdentityContract.identityProviders, execution: .eventLoop) { request, _ in self.identityProviders(request) }
        server.register(IdentityContract.externalAuthorization) { request, _ in try await self.externalAuthorization(request) }
        server.register(IdentityContract.linkIdentity) { request, _ in try await self.linkIdentity(request) }
        server.register(IdentityContract.listIdentities) { request, _ in try await self.listIdentities(request) }
        server.register(IdentityContract.unlinkIdentity) { request, _ in try await self.unlinkIdentity(request) }
        server.register(IdentityContract.operatorAuthorize) { request, _ in try await self.operatorAuthorize(request) }
        server.register(IdentityContract.createOperatorKey) { request, _ in try await self.createOperatorKey(request) }
        server.register(IdentityContract.listOperatorKeys) { request, _ in try await self.listOperatorKeys(request) }
        server.register(IdentityContract.revokeOperatorKey) { request, _ in try await self.revokeOperatorKey(request) }
        server.register(IdentityContract.searchAccounts) { request, _ in try await self.searchAccounts(request) }
        server.register(IdentityContract.accountRecord) { request, _ in try await self.accountRecord(request) }
        server.register(IdentityContract.disableAccount) { request, _ in try await self.disableAccount(request) }
        server.register(IdentityContract.enableAccount) { request, _ in try await self.enableAccount(request) }
        server.register(IdentityContract.deleteAccount) { request, _ in try await self.deleteAccount(request) }
        server.register(IdentityContract.sendPasswordReset) { request, _ in try await self.sendPasswordReset(request) }
        server.register(IdentityContract.removeAccountFactor) { request, _ in try await self.removeAccountFactor(request) }
        server.register(IdentityContract.createAccount) { request, _ in try await self.createAccount(request) }
        server.register(IdentityContract.unlinkAccountIdentity) { request, _ in try await self.unlinkAccountIdentity(request) }
        server.register(IdentityContract.updateAccount) { request, _ in try await self.updateAccount(request) }
        server.register(IdentityContract.accountSessions) { request, _ in try await self.accountSessions(request) }
        server.register(IdentityContract.endAccountSessions) { request, _ in try await self.endAccountSessions(request) }
        server.register(IdentityContract.auditEntries) { request, _ in try await self.auditEntries(request) }
        server.register(IdentityContract.verifyAudit) { request, _ in try await self.verifyAudit(request) }
        server.register(IdentityContract.openIDClients) { request, _ in try await self.openIDClients(request) }
        server.register(IdentityContract.createOpenIDClient) { request, _ in try await self.createOpenIDClient(request) }
        server.register(IdentityContract.updateOpenIDClient) { request, _ in try await self.updateOpenIDClient(request) }
        server.register(IdentityContract.rotateOpenIDClientSecret) { request, _ in try await self.rotateOpenIDClientSecret(request) }
        server.register(IdentityContract.removeOpenIDClient) { request, _ in try await self.removeOpenIDClient(request) }
        server.register(HealthContract.check) { _, _ in await self.healthReport() }
    }

    /// Readiness: the storage answers, and so does Profile (no sign-up succeeds without it).
    public func healthReport() async -> HealthReport {
        async let profileProblem = profile.unreadiness()
        let storage: HealthReport.Check
        do {
            try await self.storage.checkHealth()
            storage = .init(name: "storage", status: .ready)
        } catch {
            storage = .init(name: "storage", status: .notReady, message: error.code.rawValue)
        }
        let profile: HealthReport.Check = await profileProblem.map { .init(name: "profile", status: .notReady, message: $0) }
            ?? .init(name: "profile", status: .ready)
        return HealthReport(service: IdentityContract.serviceName, checks: [storage, profile])
    }
}

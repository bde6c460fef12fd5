import KontoClient

extension KontoClient {
    /// The stored session, or the client's own not-signed-in error before a password is asked for in vain.
    func requireStoredSession() async throws -> KontoSession {
        guard let session = try await currentSession() else {
            throw KontoClientError(code: KontoClientError.Code.notSignedIn, status: 0)
        }
        return session
    }
}

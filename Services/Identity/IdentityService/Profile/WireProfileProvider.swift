import KontoContracts
import KontoModel
import KontoWire
import NIOCore

/// The Profile service over a pooled wire client.
public struct WireProfileProvider: ProfileProvider {
    private let client: WireClient
    private let timeout: TimeAmount?

    /// - Parameter timeout: per call; by default the client's request timeout.
    public init(client: WireClient, timeout: TimeAmount? = nil) {
        self.client = client
        self.timeout = timeout
    }

    public func create(accountId: String, details: AccountDetails) async throws(ProfileProviderError) -> ProfileRecord {
        try await call(ProfileContract.create, ProfileCreateRequest(accountId: accountId, details: details))
    }

    public func load(accountId: String) async throws(ProfileProviderError) -> ProfileRecord? {
        do {
            return try await call(ProfileContract.load, ProfileLoadRequest(accountId: accountId))
        } catch let .refused(error) where error.code == .notFound {
            return nil
        }
    }

    public func modify(accountId: String, modifications: AccountModifications, expectedVersion: Int64?) async throws(ProfileProviderError) -> ProfileRecord {
        try await call(ProfileContract.modify, ProfileModifyRequest(accountId: accountId, modifications: modifications, expectedVersion: expectedVersion))
    }

    public func delete(accountId: String) async throws(ProfileProviderError) -> Bool {
        try await call(ProfileContract.delete, ProfileDeleteRequest(accountId: accountId)).deleted
    }

    /// Profile's own health check, bounded: a sign-up needs Profile, so Identity is not ready without it (and a
    /// gateway's readiness, which asks Identity, means a sign-up can succeed).
    public func unreadiness() async -> String? {
        do {
            let report = try await client.call(HealthContract.check, HealthCheckRequest(), timeout: .seconds(2))
            return report.status == .ready ? nil : "profile is not ready"
        } catch let error as WireError {
            return error.code.rawValue
        } catch {
            return "profile cannot be reached"
        }
    }

    private func call<Request, Response>(_ method: WireMethod<Request, Response>, _ request: Request) async throws(ProfileProviderError) -> Response {
        do {
            return try await client.call(method, request, timeout: timeout)
        } catch let error as WireError where error.code.family == .account {
            throw .refused(ServiceError(code: error.code, message: error.message, fields: AccountFieldError.fields(fromWireDetails: error.details)))
        } catch {
            throw .unavailable
        }
    }
}

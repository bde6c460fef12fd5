import Foundation
import KontoModel
import OpenAPIRuntime

/// The console's page of sessions and devices, through the API's own handlers.
extension GatewayOperations {
    /// One live session of the account, as its owner's page shows it.
    package struct DeviceSession: Sendable, Equatable {
        package var id: String
        package var createdAt: Date
        package var lastUsedAt: Date?
        package var signInMethod: String?
        package var clientAddress: String?
        package var clientName: String?
        package var isCurrent: Bool
    }

    package func deviceSessions() async throws -> [DeviceSession] {
        try await api.listAccountSessions(.init()).ok.body.json.sessions.map {
            DeviceSession(
                id: $0.id, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt, signInMethod: $0.signInMethod, clientAddress: $0.clientAddress,
                clientName: $0.clientName, isCurrent: $0.current
            )
        }
    }

    package func endSession(id sessionId: String, currentPassword: String?) async throws {
        let body = currentPassword.map { Operations.EndAccountSession.Input.Body.json(.init(currentPassword: $0)) }
        _ = try await api.endAccountSession(.init(path: .init(sessionId: sessionId), body: body)).noContent
    }

    package func endOtherSessions(currentPassword: String?) async throws -> Int {
        let body = currentPassword.map { Operations.EndOtherAccountSessions.Input.Body.json(.init(currentPassword: $0)) }
        return try await api.endOtherAccountSessions(.init(body: body)).ok.body.json.sessionsEnded
    }
}

/// The console's mail preferences, through the API's own handlers.
extension GatewayOperations {
    /// Whether sign-ins from new clients are mailed.
    package func mailsNewSignIns() async throws -> Bool {
        try await api.getMailPreferences(.init()).ok.body.json.newSignIn
    }

    @discardableResult
    package func setMailsNewSignIns(_ on: Bool, currentPassword: String?) async throws -> Bool {
        try await api.setMailPreferences(.init(body: .json(.init(newSignIn: on, currentPassword: currentPassword)))).ok.body.json.newSignIn
    }
}

import Foundation
import KontoModel

/// The console's "Download my data", through the API's own handler.
extension GatewayOperations {
    /// The account's data as the API answers it (``GatewayAPI/accountExport(currentPassword:)``), as a file.
    package struct AccountCopy: Sendable {
        package var json: [UInt8]
        /// The `Content-Disposition` that saves it.
        package var disposition: String
    }

    package func accountCopy(currentPassword: String?) async throws -> AccountCopy {
        let export = try await api.accountExport(currentPassword: currentPassword.map(SecretString.init))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // As the API writes its times (GatewayDateTranscoder).
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(.iso8601))
        }
        return AccountCopy(json: Array(try encoder.encode(export)), disposition: GatewayAPI.exportDisposition(export.exportedAt))
    }
}

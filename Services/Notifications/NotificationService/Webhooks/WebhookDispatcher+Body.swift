import Foundation
import KontoContracts
import KontoModel

extension WebhookDispatcher {
    /// The JSON body of one delivery: the event as stored, except a reset token's sealed box, which no receiver
    /// gets. The token itself goes, opened, only to an endpoint that names `passwordResetRequested` in its types
    /// (the mail sender), never to one that takes every type.
    static func body(for event: AccountEvent, to endpoint: WebhookEndpoint, seal: ResetTokenSeal?) throws -> [UInt8] {
        guard case let .passwordResetRequested(_, sealed, _) = event.kind else {
            return Array(try encoder.encode(event))
        }
        guard var object = try JSONSerialization.jsonObject(with: try encoder.encode(event)) as? [String: Any] else {
            throw ResetTokenSealError()
        }
        object["sealedToken"] = nil
        if endpoint.types?.contains(event.kind.name) == true {
            guard let seal else { throw ResetTokenSealError() }
            object["token"] = try seal.open(sealed, accountId: event.accountId)
        }
        return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

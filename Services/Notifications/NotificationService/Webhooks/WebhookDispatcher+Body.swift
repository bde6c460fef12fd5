import Foundation
import KontoContracts
import KontoModel

extension WebhookDispatcher {
    /// The JSON body of one delivery: the event as stored, except a sealed box, which no receiver gets. A reset
    /// token goes, opened, only to an endpoint of the deployment's file that names `passwordResetRequested` in its
    /// types (the mail sender), never to one that takes every type nor to one added through the admin API
    /// (``WebhookEndpoint/deliversResetTokens``); a mail request's secret is the courier's alone.
    static func body(for event: AccountEvent, to endpoint: WebhookEndpoint, seal: ResetTokenSeal?) throws -> [UInt8] {
        switch event.kind {
        case .mailRequested:
            return try withoutSealedToken(event) { _ in }
        case let .passwordResetRequested(_, sealed, _):
            return try withoutSealedToken(event) { object in
                if endpoint.deliversResetTokens {
                    guard let seal else { throw ResetTokenSealError() }
                    object["token"] = try seal.open(sealed, accountId: event.accountId)
                }
            }
        default:
            return Array(try encoder.encode(event))
        }
    }

    private static func withoutSealedToken(_ event: AccountEvent, _ amend: (inout [String: Any]) throws -> Void) throws -> [UInt8] {
        guard var object = try JSONSerialization.jsonObject(with: try encoder.encode(event)) as? [String: Any] else {
            throw ResetTokenSealError()
        }
        object["sealedToken"] = nil
        object["sealedCode"] = nil
        try amend(&object)
        return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

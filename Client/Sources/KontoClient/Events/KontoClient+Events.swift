import KontoModel
import OpenAPIRuntime

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One event of the account's stream (`GET /v1/account/events`).
public struct KontoEvent: Sendable, Equatable {
    /// The event id: pass the last one seen to ``KontoClient/events(after:)`` to resume without losing any.
    public var id: String
    /// The event's type (``AccountEvent/Kind/name``).
    public var type: String
    /// The event's JSON as the gateway sent it (a reset request's token is never in it).
    public var data: String
    /// The event decoded, when it decodes (a reset request without its token does not).
    public var accountEvent: AccountEvent?
}

extension KontoClient {
    /// The account's events, oldest first (after `lastEventId` when resuming), then new ones as they happen. The
    /// sequence ends when the session ends or the gateway closes the stream, and throws a ``KontoClientError`` when
    /// the stream is refused or ends with an error event (reconnect with the last id then; nothing is lost).
    ///
    /// The stream is read by the OpenAPI runtime's Server-Sent Events decoder, each line bounded by the client (the
    /// decoder's own buffer is not); events without data (the gateway's heartbeats) are skipped.
    public func events(after lastEventId: String? = nil) async throws -> AsyncThrowingStream<KontoEvent, any Error> {
        let session = try await requireSession()
        let headers = Operations.AccountEvents.Input.Headers(lastEventID: lastEventId)
        let body: HTTPBody
        switch try await call(token: session.token, { try await $0.accountEvents(headers: headers) }) {
        case .ok(let ok): body = try ok.body.textEventStream
        case .default(let status, let problem): throw Self.refusal(status, problem)
        }
        return AsyncThrowingStream { continuation in
            let reader = Task {
                do {
                    for try await event in body.asDecodedServerSentEvents() {
                        guard let data = event.data else { continue }
                        let type = event.event ?? "message"
                        if type == "error" {
                            let code = (try? JSONDecoder().decode(StreamError.self, from: Data(data.utf8)))?.code ?? KontoClientError.Code.unexpectedAnswer
                            throw KontoClientError(code: code, status: 200, detail: "The event stream ended with \(code); resume after the last event id.")
                        }
                        continuation.yield(KontoEvent(
                            id: event.id ?? "", type: type, data: data,
                            accountEvent: try? JSONDecoder().decode(AccountEvent.self, from: Data(data.utf8))
                        ))
                    }
                    continuation.finish()
                } catch let error as KontoClientError {
                    continuation.finish(throwing: error)
                } catch {
                    continuation.finish(throwing: KontoClientError(
                        code: KontoClientError.Code.unreachable, status: 200, detail: "The event stream broke off (\(error)); resume after the last event id."
                    ))
                }
            }
            continuation.onTermination = { _ in reader.cancel() }
        }
    }
}

private struct StreamError: Decodable {
    var code: String
}

import Foundation
import KontoModel

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
    public func events(after lastEventId: String? = nil) async throws -> AsyncThrowingStream<KontoEvent, any Error> {
        let session = try await requireSession()
        var request = KontoHTTPRequest(method: "GET", path: "/v1/account/events", headers: ["Accept": "text/event-stream", "Authorization": "Bearer \(session.token)"])
        if let lastEventId {
            request.headers["Last-Event-ID"] = lastEventId
        }
        let answer: KontoHTTPStream
        do {
            answer = try await transport.stream(request)
        } catch {
            throw Self.unreachable(error)
        }
        guard answer.status == 200 else {
            let body = try await answer.collect(upTo: 64 * 1024)
            throw Self.refusal(KontoHTTPResponse(status: answer.status, headers: answer.headers, body: body))
        }
        let bytes = KontoByteSequence(chunks: answer.body)
        return AsyncThrowingStream { continuation in
            let reader = Task {
                do {
                    var parser = ServerSentEventParser()
                    for try await byte in bytes {
                        guard let event = parser.feed(byte) else { continue }
                        if event.type == "error" {
                            let code = (try? JSONDecoder().decode(StreamError.self, from: Data(event.data.utf8)))?.code ?? KontoClientError.Code.unexpectedAnswer
                            throw KontoClientError(code: code, status: 200, detail: "The event stream ended with \(code); resume after the last event id.")
                        }
                        continuation.yield(KontoEvent(
                            id: event.id ?? "",
                            type: event.type,
                            data: event.data,
                            accountEvent: try? JSONDecoder().decode(AccountEvent.self, from: Data(event.data.utf8))
                        ))
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in reader.cancel() }
        }
    }
}

private struct StreamError: Decodable {
    var code: String
}

import Foundation
import KontoContracts
import KontoModel
import KontoWire
import Logging
import OpenAPIRuntime
import ServiceLifecycle

extension GatewayAPI {
    /// The caller's events as Server-Sent Events from Notifications' per-account feed, from the present, or resuming
    /// after `Last-Event-ID`. The session is checked again on every event that can end it and at each heartbeat; the
    /// stream ends when it has ended.
    func accountEvents(_ input: Operations.AccountEvents.Input) async throws -> Operations.AccountEvents.Output {
        let (token, session) = try await authenticate()
        var after: UUID?
        if let lastEventID = input.headers.lastEventID, !lastEventID.isEmpty {
            guard let id = UUID(uuidString: lastEventID) else { throw GatewayProblem.malformed("Last-Event-ID must be an event id from this stream.") }
            after = id
        }
        let scope = RequestScope.scope
        // A new stream starts at the present: a stolen session does not read the account's history (former userIds
        // and details). The cursor is taken before the stream opens, so nothing stored after the client saw it open
        // is missed; Last-Event-ID resumes a stream the client was reading.
        var afterCursor: String?
        if after == nil {
            afterCursor = try await upstreams.notifications(NotificationsContract.tailCursor, NotificationsTailCursorRequest()).cursor
        }
        let subscription: WireClientSubscription<AccountEvent>
        do {
            subscription = try await upstreams.events.subscribe(
                NotificationsContract.feed,
                NotificationsFeedRequest(accountId: session.accountId, after: after, afterCursor: afterCursor),
                credit: 32,
                requestID: scope.requestID,
                traceParent: scope.traceParent
            )
        } catch {
            throw GatewayProblem.unavailable(NotificationsContract.serviceName)
        }
        let (stream, continuation) = AsyncThrowingStream<ArraySlice<UInt8>, any Error>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let heartbeat = eventStreamHeartbeat
        let producer = Task {
            await RequestScope.$current.withValue(scope) {
                await streamEvents(subscription, token: token, heartbeat: heartbeat, into: continuation)
            }
        }
        continuation.onTermination = { _ in
            // The client went away (or the stream ended): stop reading the feed.
            producer.cancel()
            subscription.cancel()
        }
        // A comment first, so the client sees the stream open before the first event.
        continuation.yield(ArraySlice(": konto account events\n\n".utf8))
        return .ok(.init(body: .textEventStream(HTTPBody(stream, length: .unknown, iterationBehavior: .single))))
    }

    private func streamEvents(
        _ subscription: WireClientSubscription<AccountEvent>,
        token: BearerToken,
        heartbeat: Duration,
        into continuation: AsyncThrowingStream<ArraySlice<UInt8>, any Error>.Continuation
    ) async {
        let logger = RequestScope.scope.logger
        await withTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                do {
                    for try await delivery in subscription {
                        // A mail request is the courier's (an address, a sealed secret): not the account's news.
                        if case .mailRequested = delivery.event.kind {
                            subscription.acknowledge(delivery)
                            continue
                        }
                        continuation.yield(ArraySlice(Self.serverSentEvent(delivery.event)))
                        subscription.acknowledge(delivery)
                        if Self.mayEndSession(delivery.event.kind), await !sessionIsValid(token) {
                            break
                        }
                    }
                } catch is CancellationError {
                } catch {
                    // The feed failed (Notifications went away, or Last-Event-ID names no event of this account): tell
                    // the client why; it reconnects, as SSE clients do.
                    let code = (error as? WireError)?.code ?? KontoErrorCode.gatewayServiceUnavailable
                    continuation.yield(ArraySlice("event: error\ndata: {\"code\":\"\(code)\"}\n\n".utf8))
                    logger.info("event stream ended by its feed", metadata: ["konto.error_code": "\(code)"])
                }
            }
            tasks.addTask {
                while !Task.isCancelled {
                    do {
                        try await Task.sleep(for: heartbeat)
                    } catch {
                        return
                    }
                    guard await sessionIsValid(token) else { return }
                    continuation.yield(ArraySlice(": heartbeat\n\n".utf8))
                }
            }
            tasks.addTask {
                // A stream lasts as long as the session: without this, a graceful shutdown would wait for every
                // open stream's client to leave. The client is told why and resumes elsewhere with Last-Event-ID.
                guard (try? await gracefulShutdown()) != nil else { return }
                continuation.yield(ArraySlice("event: error\ndata: {\"code\":\"\(WireError.Code.shuttingDown)\"}\n\n".utf8))
            }
            // Whichever ends first ends the stream.
            await tasks.next()
            tasks.cancelAll()
        }
        subscription.cancel()
        continuation.finish()
    }

    private func sessionIsValid(_ token: BearerToken) async -> Bool {
        do {
            _ = try await upstreams.identity(IdentityContract.validateSession, IdentitySessionRequest(token: token))
            return true
        } catch {
            // A service outage ends the stream too; the client reconnects with Last-Event-ID and loses nothing.
            return false
        }
    }

    static func mayEndSession(_ kind: AccountEvent.Kind) -> Bool {
        switch kind {
        case .disassociatingAccount, .sessionsRevoked, .passwordChanged, .deletingAccount, .accountDisabled: true
        default: false
        }
    }

    /// One event as `id`, `event` and `data` lines. A reset token is for the mail sender only: even sealed, it is
    /// left out.
    static func serverSentEvent(_ event: AccountEvent) -> [UInt8] {
        var data = "{}"
        if let encoded = try? sseEncoder.encode(event), var object = try? JSONSerialization.jsonObject(with: encoded) as? [String: Any] {
            // What the mailer needs and an app does not: the reset token, and the userIds of a change (which also
            // ends this stream's other sessions: a stolen one must not learn the new userId from its last event).
            object["sealedToken"] = nil
            object["sealedCode"] = nil
            // The same text as the `id:` line (Codable writes a UUID in upper case).
            object["id"] = event.id.uuidString.lowercased()
            if case .userIdChanged = event.kind {
                object["previous"] = nil
                object["new"] = nil
            }
            if let shown = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) {
                // JSON has no raw newlines, so the data is one line.
                data = String(decoding: shown, as: UTF8.self)
            }
        }
        return Array("id: \(event.id.uuidString.lowercased())\nevent: \(event.kind.name)\ndata: \(data)\n\n".utf8)
    }

    private static let sseEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

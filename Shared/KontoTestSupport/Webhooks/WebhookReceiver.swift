import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A small HTTP server standing in for a webhook endpoint: records every request and answers each with the next
/// status of its script (the last one repeating).
public final class WebhookReceiver: Sendable {
    public struct Request: Sendable {
        public var headers: HTTPHeaders
        public var body: [UInt8]
    }

    private struct State {
        var requests: [Request] = []
        var statuses: [HTTPResponseStatus]
        var waiters: [(id: UInt64, count: Int, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextWaiter: UInt64 = 0
    }

    private let state: Mutex<State>
    private let channel: any Channel

    public var port: Int { channel.localAddress!.port! }
    public var requests: [Request] { state.withLock { $0.requests } }

    private init(channel: any Channel, statuses: [HTTPResponseStatus]) {
        self.channel = channel
        self.state = Mutex(State(statuses: statuses))
    }

    /// Listens on `host` (loopback by default; a ``VirtualNetwork``'s bridge address for services on its hosts).
    public static func start(statuses: [HTTPResponseStatus], host: String = "127.0.0.1") async throws -> WebhookReceiver {
        let box = StateBox(statuses: statuses)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(record: box.record))
                }
            }
            .bind(host: host, port: 0)
            .get()
        let receiver = WebhookReceiver(channel: channel, statuses: statuses)
        box.receiver.withLock { $0 = receiver }
        return receiver
    }

    /// Returns once `count` requests have come.
    public func waitForRequests(_ count: Int) async {
        _ = await waitForRequests(count, within: nil)
    }

    /// Returns true once `count` requests have come, false when `bound` passes first.
    public func waitForRequests(_ count: Int, within bound: Duration) async -> Bool {
        await waitForRequests(count, within: .some(bound))
    }

    private func waitForRequests(_ count: Int, within bound: Duration?) async -> Bool {
        await withCheckedContinuation { continuation in
            let id: UInt64? = state.withLock { state in
                if state.requests.count >= count { return nil }
                state.nextWaiter += 1
                state.waiters.append((state.nextWaiter, count, continuation))
                return state.nextWaiter
            }
            guard let id else { return continuation.resume(returning: true) }
            guard let bound else { return }
            Task {
                try? await Task.sleep(for: bound)
                let waiter = self.state.withLock { state -> CheckedContinuation<Bool, Never>? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index).continuation
                }
                waiter?.resume(returning: false)
            }
        }
    }

    public func stop() async {
        try? await channel.close()
    }

    /// Records a request; the status to answer it with.
    fileprivate func record(_ request: Request) -> HTTPResponseStatus {
        let (status, ready) = state.withLock { state in
            state.requests.append(request)
            let status = state.statuses.count > 1 ? state.statuses.removeFirst() : state.statuses[0]
            let ready = state.waiters.filter { $0.count <= state.requests.count }.map(\.continuation)
            state.waiters.removeAll { $0.count <= state.requests.count }
            return (status, ready)
        }
        ready.forEach { $0.resume(returning: true) }
        return status
    }

    /// Lets the channel handlers reach the receiver created after the bind.
    private final class StateBox: Sendable {
        let receiver = Mutex<WebhookReceiver?>(nil)
        init(statuses: [HTTPResponseStatus]) {}
        var record: @Sendable (Request) -> HTTPResponseStatus {
            { request in self.receiver.withLock { $0 }?.record(request) ?? .serviceUnavailable }
        }
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        private let record: @Sendable (Request) -> HTTPResponseStatus
        private var head: HTTPRequestHead?
        private var body: [UInt8] = []

        init(record: @escaping @Sendable (Request) -> HTTPResponseStatus) {
            self.record = record
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch Self.unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                self.body = []
            case .body(let buffer):
                self.body += buffer.readableBytesView
            case .end:
                guard let head else { return }
                let status = record(Request(headers: head.headers, body: body))
                var headers = HTTPHeaders()
                headers.add(name: "Content-Length", value: "0")
                context.write(Self.wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
                context.writeAndFlush(Self.wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}

import KontoWire
import NIOCore
import NIOPosix
import NIOSSL

/// What one load connection sends and how it checks the answers. Created per connection and used
/// only on that connection's event loop.
protocol WireWorkload: AnyObject {
    func nextRequest() -> WireRequest
    /// Throws when the answer to the last request is wrong; the run then fails.
    func check(_ response: WireResponse) throws
}

/// Drives a wire server like redis-benchmark and pgbench drive theirs: each connection keeps
/// exactly one request outstanding (-P 1) and sends the next as soon as the answer arrives, all on
/// the event loop, recording every round trip after the warm-up.
enum WireLoadGenerator {
    struct Target: Sendable {
        var port: Int
        var secret: String
        var serviceName = Target.defaultServiceName
        /// The server called (its verifier of the caller proves the handshake).
        var serverName = "bench"
        /// Set: TLS first, verifying the server against it (`konto-bench wire --tls`).
        var tls: NIOSSLContext?

        static let defaultServiceName = "bench-load"
    }

    struct Result {
        var requests: Int
        var seconds: Double
        var latencies: LatencyHistogram
        var requestsPerSecond: Double { Double(self.requests) / self.seconds }
    }

    static func run(
        _ target: Target,
        connections: Int,
        warmup: TimeAmount,
        duration: TimeAmount,
        group: any EventLoopGroup,
        workload: @escaping @Sendable (_ connection: Int) -> any WireWorkload
    ) async throws -> Result {
        let start = NIODeadline.now()
        let recordFrom = start + warmup
        let stopAt = recordFrom + duration
        var futures: [EventLoopFuture<LatencyHistogram>] = []
        for index in 0..<connections {
            let eventLoop = group.next()
            let done = eventLoop.makePromise(of: LatencyHistogram.self)
            let channel = try await ClientBootstrap(group: eventLoop)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let sync = channel.pipeline.syncOperations
                        if let tls = target.tls {
                            try sync.addHandler(NIOSSLClientHandler(context: tls, serverHostname: nil))
                        }
                        try sync.addHandler(ByteToMessageHandler(WireFrameDecoder()))
                        try sync.addHandler(MessageToByteHandler(WireFrameEncoder()))
                        try sync.addHandler(LoadConnectionHandler(
                            target: target,
                            workload: workload(index),
                            recordFrom: recordFrom,
                            stopAt: stopAt,
                            done: done
                        ))
                    }
                }
                .connect(host: "127.0.0.1", port: target.port)
                .get()
            futures.append(done.futureResult.always { _ in channel.close(promise: nil) })
        }
        var latencies = LatencyHistogram()
        for future in futures {
            latencies.merge(try await future.get())
        }
        let seconds = Double(duration.nanoseconds) / 1e9
        return Result(requests: latencies.count, seconds: seconds, latencies: latencies)
    }
}

/// One benchmark connection: handshake, then request → response → request … until `stopAt`.
final class LoadConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = WireFrame
    typealias OutboundOut = WireFrame

    private let target: WireLoadGenerator.Target
    private let workload: any WireWorkload
    private let recordFrom: UInt64
    private let stopAt: UInt64
    private let done: EventLoopPromise<LatencyHistogram>
    private var latencies = LatencyHistogram()
    private var sentAt: UInt64 = 0
    private var nextID: UInt64 = 1
    private var transcript: WireHandshake.Transcript?

    init(
        target: WireLoadGenerator.Target,
        workload: any WireWorkload,
        recordFrom: NIODeadline,
        stopAt: NIODeadline,
        done: EventLoopPromise<LatencyHistogram>
    ) {
        self.target = target
        self.workload = workload
        self.recordFrom = recordFrom.uptimeNanoseconds
        self.stopAt = stopAt.uptimeNanoseconds
        self.done = done
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = Self.unwrapInboundIn(data)
        switch frame.message {
        case .hello(.challenge(let challenge)):
            // The whole handshake, as a real client does it: its proof, and the server's checked below.
            let hello = WireHandshake.clientHello(answering: challenge, serviceName: self.target.serviceName, serverName: self.target.serverName, secret: WireSecret(self.target.secret))
            self.transcript = WireHandshake.Transcript(
                serverNonce: challenge.nonce, serverVersions: challenge.supportedVersions, serviceName: hello.serviceName,
                clientVersions: hello.supportedVersions, clientNonce: hello.nonce
            )
            context.writeAndFlush(Self.wrapOutboundOut(WireFrame(correlationID: 0, message: .hello(.clientHello(hello)))), promise: nil)
        case .welcome(let welcome):
            let key = WireSecret(self.target.secret).proofKey(caller: self.target.serviceName, server: self.target.serverName)
            guard let transcript = self.transcript,
                  WireHandshake.isValidServerProof(welcome.mac, key: key, transcript: transcript, version: welcome.version, serverName: welcome.serverName)
            else {
                context.close(promise: nil)
                return
            }
            self.send(context: context)
        case .response(let response):
            let now = NIODeadline.now().uptimeNanoseconds
            do {
                try self.workload.check(response)
            } catch {
                self.done.fail(error)
                context.close(promise: nil)
                return
            }
            if now >= self.recordFrom, now < self.stopAt {
                self.latencies.record(nanoseconds: now - self.sentAt)
            }
            if now < self.stopAt {
                self.send(context: context)
            } else {
                self.done.succeed(self.latencies)
            }
        case .error(let body):
            self.done.fail(body.wireError)
        default:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.done.fail(WireError.connectionClosed)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.done.fail(error)
        context.close(promise: nil)
    }

    private func send(context: ChannelHandlerContext) {
        let request = self.workload.nextRequest()
        let id = self.nextID
        self.nextID += 1
        self.sentAt = NIODeadline.now().uptimeNanoseconds
        context.writeAndFlush(Self.wrapOutboundOut(WireFrame(correlationID: id, message: .request(request))), promise: nil)
    }
}

/// Round-trip times in 1 µs buckets up to 50 ms (plus an overflow bucket): constant memory per
/// connection, so recording costs the load generator nothing but an increment.
struct LatencyHistogram: Sendable {
    static let bucketCount = 50_000
    private(set) var buckets = [UInt32](repeating: 0, count: Self.bucketCount + 1)
    private(set) var count = 0

    mutating func record(nanoseconds: UInt64) {
        let micros = Int(min(nanoseconds / 1_000, UInt64(Self.bucketCount)))
        self.buckets[micros] &+= 1
        self.count += 1
    }

    mutating func merge(_ other: LatencyHistogram) {
        for index in self.buckets.indices { self.buckets[index] &+= other.buckets[index] }
        self.count += other.count
    }

    /// The smallest bucket (in milliseconds, upper edge) holding the given fraction of samples.
    func percentileMilliseconds(_ fraction: Double) -> Double {
        guard self.count > 0 else { return .nan }
        let target = Int((Double(self.count) * fraction).rounded(.up))
        var seen = 0
        for (micros, bucket) in self.buckets.enumerated() {
            seen += Int(bucket)
            if seen >= target { return Double(micros + 1) / 1_000 }
        }
        return Double(Self.bucketCount) / 1_000
    }
}

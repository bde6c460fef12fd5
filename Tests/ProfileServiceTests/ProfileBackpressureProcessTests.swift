import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
import NIOCore
import NIOPosix
import Testing

/// `konto-profile` as a real process against a peer that pipelines profile loads and never reads the answers
/// (issue 28, item 6): its resident memory must stay bounded, and another client must still be served.
@Suite("konto-profile backpressure process")
struct ProfileBackpressureProcessTests {
    /// The process's resident set size in bytes, from /proc/PID/status (VmRSS, in kB).
    static func residentBytes(of pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw WireError(code: KontoErrorCode(rawValue: "test.noRSS"), message: "no VmRSS in /proc/\(pid)/status") }
        return kilobytes * 1024
    }

    /// Collects the frames a raw peer receives.
    final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = WireFrame
        let continuation: AsyncStream<WireFrame>.Continuation
        init(_ continuation: AsyncStream<WireFrame>.Continuation) { self.continuation = continuation }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) { self.continuation.yield(Self.unwrapInboundIn(data)) }
        func channelInactive(context: ChannelHandlerContext) { self.continuation.finish() }
    }

    @Test("a peer that pipelines 20,000 loads of a 60 KB profile and never reads keeps the process within 64 MB of idle, and another client is served")
    func neverReadingPeer() async throws {
        // The contract configuration, keeping unknown keys so that one value can make the profile 60 KB.
        let contract = try String(contentsOfFile: try ProfileServiceHarness.contractAccountsPath(), encoding: .utf8)
        let accountsPath = FileManager.default.temporaryDirectory.appendingPathComponent("konto-backpressure-\(UUID().uuidString).yaml").path
        try contract.replacingOccurrences(of: "unknownKeys: reject", with: "unknownKeys: keep").write(toFile: accountsPath, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: accountsPath) }
        let port = try FreePort.loopback()
        var environment = try ProfileProcessTests.environment(port: port, database: nil)
        environment["KONTO_ACCOUNTS_CONFIG"] = accountsPath
        let process = try ServiceProcess.start(try ServiceProcess.executable(named: "konto-profile"), environment: environment)
        do {
            let client = ProfileProcessTests.client(port: port)
            try await RunningServices.with([client], logger: ProfileServiceHarness.logger) {
                _ = try await Eventually.answer { try await client.call(HealthContract.check, .init()) }
                var details = AccountDetails()
                details[\.name] = PersonName(givenName: "Ada", familyName: "Lovelace")
                details[identifier: "blob"] = .string(String(repeating: "x", count: 60_000))
                // Generous bounds: this suite shares the machine with the rest of the run; what it judges is memory.
                _ = try await client.call(ProfileContract.create, .init(accountId: "acc-big", details: details), timeout: .seconds(30))
                let load = ByteBuffer(string: #"{"accountId":"acc-big"}"#)
                let answer = try await client.callRaw(ProfileContract.load.name, payload: load, timeout: .seconds(30))
                #expect(answer.readableBytes > 60_000)
                let idle = try Self.residentBytes(of: process.pid)

                let frames = AsyncStream.makeStream(of: WireFrame.self)
                let greedy = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(WireFrameDecoder(maximumLength: 1 << 20)))
                            try channel.pipeline.syncOperations.addHandler(Collector(frames.continuation))
                        }
                    }
                    .connect(host: "127.0.0.1", port: port)
                    .get()
                var received = frames.stream.makeAsyncIterator()
                guard case .hello(.challenge(let challenge)) = await received.next()?.message else {
                    Issue.record("expected a challenge")
                    return
                }
                var hello = ByteBuffer()
                // A name the allow-list lets load profiles: any other would be answered small wire.forbidden frames.
                let name = WireAllowList.gateway
                let greeting = WireHandshake.clientHello(answering: challenge, serviceName: name, serverName: ProfileContract.serviceName, secret: WireSecret(ProfileProcessTests.secret))
                WireFrameCodec.encode(WireFrame(correlationID: 0, message: .hello(.clientHello(greeting))), into: &hello)
                try await greedy.writeAndFlush(hello)
                guard case .welcome = await received.next()?.message else {
                    Issue.record("expected a welcome")
                    return
                }
                // From here nothing is read.
                try await greedy.setOption(.autoRead, value: false).get()
                var requests = ByteBuffer()
                for id in 1...20_000 {
                    WireFrameCodec.encode(WireFrame(correlationID: UInt64(id), message: .request(.init(method: ProfileContract.load.name, payload: load))), into: &requests)
                }
                greedy.writeAndFlush(requests, promise: nil)

                // The peak over a few seconds: unbounded buffering shows within them (it reached 500 MB).
                var peak = idle
                let end = ContinuousClock.now + .seconds(4)
                while ContinuousClock.now < end {
                    peak = max(peak, try Self.residentBytes(of: process.pid))
                    try await Task.sleep(for: .milliseconds(50))
                }
                print("neverReadingPeer: konto-profile idle \(idle / 1_048_576) MiB, peak \(peak / 1_048_576) MiB")
                #expect(peak - idle <= 64 << 20, "konto-profile grew from \(idle) to \(peak) bytes")
                // Another client is served while the greedy peer is held.
                for _ in 0..<10 {
                    let other = try await client.callRaw(ProfileContract.load.name, payload: load, timeout: .seconds(30))
                    #expect(other.readableBytes > 60_000)
                }
                let after = try Self.residentBytes(of: process.pid)
                #expect(after - idle <= 64 << 20, "konto-profile grew from \(idle) to \(after) bytes")
                try? await greedy.close()
            }
        } catch {
            await process.stop()
            throw error
        }
        await process.stop()
    }
}

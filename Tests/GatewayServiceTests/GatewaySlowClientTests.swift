import Foundation
import GatewayService
import KontoTesting
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// A client that sends its request head slowly (slowloris) is cut off after the head timeout, though every byte
/// would reset an idle timeout.
@Suite("Gateway and slow clients")
struct GatewaySlowClientTests {
    @Test("a request head still incomplete after the head timeout: the connection is closed")
    func slowHeadClosed() async throws {
        try await GatewayHarness.withGateway(configure: { $0.requestHeadTimeout = .milliseconds(300) }) { gateway in
            let port = try #require(Int(gateway.baseURL.split(separator: ":").last ?? ""))
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get()
            let start = ContinuousClock.now
            // Part of a head, then a byte at a time, each well inside the idle timeout.
            try await channel.writeAndFlush(ByteBuffer(string: "GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n")).get()
            for _ in 0..<40 where channel.isActive {
                try? await channel.writeAndFlush(ByteBuffer(string: "X")).get()
                try await Task.sleep(for: .milliseconds(50))
            }
            try await channel.closeFuture.get()
            #expect(ContinuousClock.now - start < .seconds(2), "closed after the head timeout, not after the idle timeout")

            // A prompt client on the same gateway is served.
            #expect(try await gateway.request(.GET, "/health/live").status == 200)
        }
    }
}

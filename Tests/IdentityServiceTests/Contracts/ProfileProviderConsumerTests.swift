import Foundation
@testable import IdentityService
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
import NIOCore
import Synchronization
import Testing

/// Identity's Profile client as a consumer of the Profile contract: for every recorded create, load and delete it
/// could make, it sends exactly the recorded request, reads the recorded answer, and maps the recorded errors
/// (account refusals passed on, everything else "unavailable", so sign-up compensates).
@Suite("Identity's Profile client, consumer side of the Profile contract")
struct ProfileProviderConsumerTests {
    /// What the stand-in Profile answers next, and what it received.
    final class Script: Sendable {
        private let state = Mutex<(example: ContractExample?, received: [String])>((nil, []))

        func play(_ example: ContractExample) {
            state.withLock { $0 = (example, []) }
        }

        var received: [String] { state.withLock { $0.received } }

        func answer(_ payload: ByteBuffer) throws -> ByteBuffer {
            let example = try state.withLock { state in
                state.received.append(try ContractExample.canonical(json: payload.readableBytesView))
                return state.example
            }
            guard let example else { throw WireError(code: KontoErrorCode(rawValue: "test.noExample"), message: "no example") }
            if let error = example.error {
                throw WireError(code: error.code, message: "recorded", isRetryable: error.retryable, details: error.details.map { Array($0.utf8) } ?? [])
            }
            return ByteBuffer(string: example.response ?? "{}")
        }
    }

    @Test("create, load and delete as recorded in Tests/Contracts/profile")
    func replay() async throws {
        let examples = try ContractExample.samples(of: ContractExample.load(service: "profile", contractVersion: ProfileContract.version))
        let script = Script()
        let server = WireServer(
            configuration: WireServer.Configuration(port: 0, serverName: ProfileContract.serviceName, secret: WireSecret(IdentityServiceHarness.secret)),
            logger: IdentityServiceHarness.logger
        )
        for method in ProfileContract.methods {
            server.registerRaw(method) { payload, _ in try script.answer(payload) }
        }
        let checked = try await RunningServices.with([server], logger: IdentityServiceHarness.logger) {
            let client = IdentityServiceHarness.client(port: try await server.localAddress().port!, as: WireAllowList.gateway, at: ProfileContract.serviceName)
            return try await RunningServices.with([client], logger: IdentityServiceHarness.logger) {
                let provider = WireProfileProvider(client: client)
                var checked = 0
                // Requests a well-behaved client never produces (a password for Profile) are the provider side's to check.
                for example in examples where example.consumerProduces {
                    script.play(example)
                    let outcome: Result<Void, ProfileProviderError>
                    switch example.method {
                    case ProfileContract.create.name:
                        let request = try JSONDecoder().decode(ProfileCreateRequest.self, from: Data(example.request.utf8))
                        outcome = await Self.outcome { () async throws(ProfileProviderError) in
                            let stored = try await provider.create(accountId: request.accountId, details: request.details)
                            if let response = example.response {
                                #expect(stored == (try? JSONDecoder().decode(ProfileRecord.self, from: Data(response.utf8))))
                            }
                        }
                    case ProfileContract.load.name:
                        let request = try JSONDecoder().decode(ProfileLoadRequest.self, from: Data(example.request.utf8))
                        // Identity loads whole accounts only.
                        guard request.keys == nil else { continue }
                        outcome = await Self.outcome { () async throws(ProfileProviderError) in _ = try await provider.load(accountId: request.accountId) }
                    case ProfileContract.delete.name:
                        let request = try JSONDecoder().decode(ProfileDeleteRequest.self, from: Data(example.request.utf8))
                        outcome = await Self.outcome { () async throws(ProfileProviderError) in _ = try await provider.delete(accountId: request.accountId) }
                    default:
                        continue
                    }
                    checked += 1
                    #expect(script.received == [example.request], "\(example.name): sent \(script.received)")
                    switch (example.error, outcome) {
                    case (nil, .success):
                        break
                    case let (error?, .failure(.refused(refusal))):
                        #expect(error.code.family == .account, "\(example.name): \(error.code) should not reach the caller")
                        #expect(refusal.code == error.code)
                    case let (error?, .failure(.unavailable)):
                        // A Profile-specific refusal (an existing account) is a defect between the services to Identity: it
                        // compensates as for an outage.
                        #expect(error.code.family != .account || error.code == AccountError.Code.notFound, "\(example.name)")
                    case let (nil, .failure(failure)):
                        Issue.record("\(example.name): failed with \(failure)")
                    case (_?, .success):
                        // load of a missing account: not found is an answer (nil), not an error.
                        #expect(example.error?.code == AccountError.Code.notFound && example.method == ProfileContract.load.name, "\(example.name)")
                    }
                }
                return checked
            }
        }
        #expect(checked >= 5)
    }

    static func outcome(_ body: () async throws(ProfileProviderError) -> Void) async -> Result<Void, ProfileProviderError> {
        do {
            try await body()
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    @Test("readiness asks Profile's health check: an unreachable Profile makes it say why")
    func unreachableProfile() async throws {
        let client = IdentityServiceHarness.client(port: try FreePort.loopback(), as: WireAllowList.gateway, at: ProfileContract.serviceName)
        let problem = try await RunningServices.with([client], logger: IdentityServiceHarness.logger) {
            await WireProfileProvider(client: client, timeout: .seconds(2)).unreadiness()
        }
        #expect(problem?.hasPrefix("wire.") == true, "\(problem ?? "nil")")
    }

}

import KontoContracts
import KontoWire
import Logging

/// A Profile endpoint that forwards to a real Profile but answers `profile.create` only `delay` after the real one
/// committed: what Identity sees when Profile answers after its deadline.
struct LateProfileProxy {
    let server: WireServer

    init(upstream: WireClient, delay: Duration, secret: String, logger: Logger) {
        server = WireServer(
            configuration: WireServer.Configuration(host: "127.0.0.1", port: 0, serverName: ProfileContract.serviceName, secret: WireSecret(secret)),
            logger: logger
        )
        for method in [ProfileContract.load.name, ProfileContract.delete.name, ProfileContract.modify.name] {
            server.registerRaw(method) { payload, _ in try await upstream.callRaw(method, payload: payload) }
        }
        server.registerRaw(ProfileContract.create.name) { payload, _ in
            let answer = try await upstream.callRaw(ProfileContract.create.name, payload: payload)
            // The caller's deadline cancels this task; the create above has committed regardless.
            try? await Task.sleep(for: delay)
            return answer
        }
    }
}

import IdentityService
import KontoRuntime
import Logging

/// `konto-identity`: the Identity service as a process. Configuration comes from the environment (docs/CONFIGURATION.md lists
/// it); SIGTERM and SIGINT shut it down gracefully, its parts in reverse start order.
@main
enum KontoIdentity {
    static func main() async {
        await ServiceMain.run(service: "identity") { environment, logger in
            let configuration = try IdentityServiceConfiguration(environment: environment, logger: logger)
            let server = try IdentityServer(configuration: configuration, logger: logger)
            return ServiceMain.Assembly(graph: try server.componentGraph(), metadata: [
                "konto.host": "\(configuration.host)",
                "konto.port": "\(configuration.port)",
                "konto.storage": "\(configuration.database.map { "postgres \($0)" } ?? "memory")",
                "konto.profile": "\(configuration.profileHost):\(configuration.profilePort)",
                "konto.argon2": "\(configuration.hashing.parameters)",
            ])
        }
    }
}

import KontoRuntime
import Logging
import ProfileService

/// `konto-profile`: the Profile service as a process. Configuration comes from the environment
/// (docs/CONFIGURATION.md lists it); SIGTERM and SIGINT shut it down gracefully, its parts in reverse start order.
@main
enum KontoProfile {
    static func main() async {
        await ServiceMain.run(service: "profile") { environment, logger in
            let configuration = try ProfileServiceConfiguration(environment: environment, logger: logger)
            let server = try ProfileServer(configuration: configuration, logger: logger)
            // One group of the service's parts: on SIGTERM the wire server drains before the database closes.
            return ServiceMain.Assembly(graph: try server.componentGraph(), metadata: [
                "konto.host": "\(configuration.host)",
                "konto.port": "\(configuration.port)",
                "konto.storage": "\(configuration.database.map { "postgres \($0)" } ?? "memory")",
            ])
        }
    }
}

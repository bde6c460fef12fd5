import GatewayConsole
import GatewayService
import KontoRuntime
import Logging

/// `konto-gateway`: the HTTP API as a process. Configuration comes from the environment (docs/CONFIGURATION.md lists it); SIGTERM
/// and SIGINT shut it down gracefully (the HTTP server stops accepting and finishes its requests first).
@main
enum KontoGateway {
    static func main() async {
        await ServiceMain.run(service: "gateway") { environment, logger in
            let configuration = try GatewayConfiguration(environment: environment, logger: logger)
            let server = try GatewayServer.withConsole(configuration: configuration, logger: logger)
            return ServiceMain.Assembly(graph: try server.componentGraph(), metadata: [
                "konto.host": "\(configuration.host)",
                "konto.port": "\(configuration.port)",
            ])
        }
    }
}

import KontoRuntime
import Logging
import NotificationService

/// `konto-notifications`: the Notifications service as a process. Configuration comes from the environment (docs/CONFIGURATION.md
/// lists it); SIGTERM and SIGINT shut it down gracefully, its parts in reverse start order.
@main
enum KontoNotifications {
    static func main() async {
        await ServiceMain.run(service: "notifications") { environment, logger in
            let configuration = try NotificationServiceConfiguration(environment: environment, logger: logger)
            let server = try NotificationServer(configuration: configuration, logger: logger)
            return ServiceMain.Assembly(graph: try server.componentGraph(), metadata: [
                "konto.host": "\(configuration.host)",
                "konto.port": "\(configuration.port)",
                "konto.storage": "\(configuration.database.map { "postgres \($0)" } ?? "memory")",
            ])
        }
    }
}

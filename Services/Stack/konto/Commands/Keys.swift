import ArgumentParser
import Foundation
import KontoContracts
import KontoWire

/// `konto keys`: the keys a deployment gives its services (docs/DEPLOYMENT.md, "Keys"), each to the services that
/// need it and to no other. Nothing is sent anywhere: the lines are printed for the operator's `.env` or secret store.
struct Keys: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make the services' wire keys, verifiers and data keys.",
        subcommands: [New.self, Rotate.self, Verifier.self],
        defaultSubcommand: New.self
    )

    /// `konto keys new`: fresh random keys for every service, as `.env` lines.
    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print fresh keys for every service as .env lines.")

        func run() throws {
            print(Self.render(DeploymentKeys.random()))
        }

        static func render(_ keys: DeploymentKeys) -> String {
            let names = ["gateway": "the gateway", "identity": "Identity", "profile": "Profile", "notifications": "Notifications"]
            var lines = [
                "# Konto's keys (konto keys). Give each service only the lines for it; none of them may be given to another",
                "# service. Keep them as secrets (never in a ConfigMap or an image).",
            ]
            for service in DeploymentKeys.services {
                lines.append("")
                lines.append("# \(names[service] ?? service) only:")
                for (name, value) in keys.environment(for: service).sorted(by: { $0.key < $1.key }) {
                    switch name {
                    case "KONTO_MAIL_SEAL_KEY":
                        if service == IdentityContract.serviceName {
                            lines.append("# Identity and Notifications (the courier), the same value:")
                            lines.append("\(name)=\(value)")
                        }
                    default:
                        lines.append("\(name)=\(value)")
                    }
                }
            }
            return lines.joined(separator: "\n")
        }
    }

    /// `konto keys rotate SERVICE`: a new key for one calling service and its verifiers at the servers it calls, to
    /// be added beside the old ones (each server accepts both) before the caller switches.
    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a new key for a calling service and the verifiers to add at the servers it calls.",
            discussion: "1. Add each printed verifier entry to the server's KONTO_<SERVER>_WIRE_VERIFIERS, beside the old one, and restart the servers. 2. Give the service its new key and restart it. 3. Remove the old entries from the servers."
        )

        @Argument(help: "gateway, identity or profile") var service: String

        func validate() throws {
            guard DeploymentKeys.callingServices.contains(service) else {
                throw ValidationError("'\(service)' calls no one: one of \(DeploymentKeys.callingServices.joined(separator: ", "))")
            }
        }

        func run() throws {
            let keys = DeploymentKeys.random()
            var lines = ["# \(service)'s new key:", "\(DeploymentKeys.keyVariable(service))=\(WireSecret.hex(keys.callerKeys[service]!))"]
            for (server, callers) in DeploymentKeys.callers where callers.contains(service) {
                lines.append("# add to \(DeploymentKeys.verifiersVariable(server)), beside the old entry for \(service):")
                lines.append("\(service):\(keys.verifierHex(caller: service, server: server)!)")
            }
            print(lines.joined(separator: "\n"))
        }
    }

    /// `konto keys verifier --caller NAME --server NAME`: the verifier of a caller's key (read from standard input) at
    /// one server: for an operator's own service (`operator-…`), or to check a deployment's entries.
    struct Verifier: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a caller's verifier entry at a server; the caller's key (64 hex digits) is read from standard input.",
            discussion: "With --new, a fresh key for the caller is made and printed first instead."
        )

        @Option(help: "The calling service's name, e.g. operator-billing.") var caller: String
        @Option(help: "identity, profile or notifications") var server: String
        @Flag(help: "Make a new key for the caller instead of reading one.") var new = false

        func validate() throws {
            guard case .success = WireVerifiers.parse("\(caller):" + String(repeating: "0", count: 64), server: server) else {
                throw ValidationError("--caller is lower-case letters, digits, - and _")
            }
            guard DeploymentKeys.callers.contains(where: { $0.server == server }) else {
                throw ValidationError("--server is one of \(DeploymentKeys.callers.map(\.server).joined(separator: ", "))")
            }
        }

        func run() throws {
            let key: [UInt8]
            if new {
                key = DeploymentKeys.random().callerKeys[WireAllowList.gateway]!
                print("# \(caller)'s key (give it to \(caller) alone):")
                print(WireSecret.hex(key))
            } else {
                guard let line = readLine(strippingNewline: true),
                      let bytes = WireSecret.hexBytes(line.trimmingCharacters(in: .whitespaces)), bytes.count == 32
                else {
                    throw ValidationError("standard input must hold the caller's key: 64 hexadecimal digits")
                }
                key = bytes
            }
            let verifier = WireSecret(peerKey: key, for: caller).verifierBytes(caller: caller, server: server)
            print("# add to \(DeploymentKeys.verifiersVariable(server)):")
            print("\(caller):\(WireSecret.hex(verifier))")
        }
    }
}

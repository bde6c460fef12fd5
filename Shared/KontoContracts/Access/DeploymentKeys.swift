import Crypto
import Foundation
import KontoWire

/// Every key a deployment's services hold, each given to the services that need it and to no other
/// (docs/PROTOCOL.md, "Keys"): what `konto keys` prints, what the dev stack and the process tests give each service.
///
/// - each caller's own wire key (`KONTO_<SERVICE>_WIRE_KEY`), held by that caller alone;
/// - each server's verifiers of its callers (`KONTO_<SERVICE>_WIRE_VERIFIERS`, `caller:HEX,…`), which let it check
///   their handshakes and let it call no one;
/// - Identity's data key (`KONTO_IDENTITY_DATA_KEY`), Identity's alone;
/// - the mail seal key (`KONTO_MAIL_SEAL_KEY`), Identity's and the courier's (Notifications).
public struct DeploymentKeys: Sendable {
    /// Who calls each server (the callers of ``WireAllowList``; operators' services get theirs with `konto keys
    /// verifier`).
    public static let callers: [(server: String, callers: [String])] = [
        (IdentityContract.serviceName, [WireAllowList.gateway]),
        (ProfileContract.serviceName, [WireAllowList.gateway, IdentityContract.serviceName]),
        (NotificationsContract.serviceName, [WireAllowList.gateway, IdentityContract.serviceName, ProfileContract.serviceName]),
    ]
    /// The services that call others, each with a key of its own.
    public static let callingServices = [WireAllowList.gateway, IdentityContract.serviceName, ProfileContract.serviceName]
    /// Every service, as named in the variables.
    public static let services = [WireAllowList.gateway, IdentityContract.serviceName, ProfileContract.serviceName, NotificationsContract.serviceName]

    /// Each calling service's key (32 bytes).
    public var callerKeys: [String: [UInt8]]
    /// Text of 64 hexadecimal digits each.
    public var identityDataKey: String
    public var mailSealKey: String

    public init(callerKeys: [String: [UInt8]], identityDataKey: String, mailSealKey: String) {
        self.callerKeys = callerKeys
        self.identityDataKey = identityDataKey
        self.mailSealKey = mailSealKey
    }

    /// Fresh random keys (what an operator should use).
    public static func random() -> DeploymentKeys {
        func random32() -> [UInt8] {
            var generator = SystemRandomNumberGenerator()
            return (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        }
        return DeploymentKeys(
            callerKeys: Dictionary(uniqueKeysWithValues: callingServices.map { ($0, random32()) }),
            identityDataKey: WireSecret.hex(random32()),
            mailSealKey: WireSecret.hex(random32())
        )
    }

    /// Keys derived from one root (tests, which keep the root on their side only; the wire keys are the ones a
    /// service given `KONTO_WIRE_SECRET` would derive).
    public init(root: WireSecret) {
        self.init(
            callerKeys: Dictionary(uniqueKeysWithValues: Self.callingServices.map { ($0, root.peerKeyBytes(for: $0)) }),
            identityDataKey: WireSecret.hex(Array(root.derivedKey(purpose: "konto.keys.identity-data.v1").withUnsafeBytes { Array($0) })),
            mailSealKey: WireSecret.hex(Array(root.derivedKey(purpose: "konto.keys.mail-seal.v1").withUnsafeBytes { Array($0) }))
        )
    }

    public static func keyVariable(_ service: String) -> String { "KONTO_\(service.uppercased())_WIRE_KEY" }
    public static func verifiersVariable(_ service: String) -> String { "KONTO_\(service.uppercased())_WIRE_VERIFIERS" }

    /// `caller`'s verifier at `server`, as 64 hexadecimal digits (nil for a caller without a key here).
    public func verifierHex(caller: String, server: String) -> String? {
        callerKeys[caller].map { WireSecret.hex(WireSecret(peerKey: $0, for: caller).verifierBytes(caller: caller, server: server)) }
    }

    /// What `service` is given, and nothing else.
    public func environment(for service: String) -> [String: String] {
        var variables: [String: String] = [:]
        if let key = callerKeys[service] { variables[Self.keyVariable(service)] = WireSecret.hex(key) }
        if let served = Self.callers.first(where: { $0.server == service }) {
            variables[Self.verifiersVariable(service)] = served.callers.compactMap { caller in
                verifierHex(caller: caller, server: service).map { "\(caller):\($0)" }
            }.joined(separator: ",")
        }
        if service == IdentityContract.serviceName { variables["KONTO_IDENTITY_DATA_KEY"] = identityDataKey }
        if service == IdentityContract.serviceName || service == NotificationsContract.serviceName { variables["KONTO_MAIL_SEAL_KEY"] = mailSealKey }
        return variables
    }

    /// Every variable of every service (an `.env` file's worth).
    public var environment: [String: String] {
        Self.services.reduce(into: [:]) { all, service in all.merge(environment(for: service)) { first, _ in first } }
    }
}

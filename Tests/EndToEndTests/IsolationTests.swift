import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
import Testing

/// One broken service must not open every account (issue 44, 1): a process holding Profile's environment, or
/// Notifications', as the real processes were started with it, tries everything it holds.
extension AttackTests {
    /// Every secret a service's environment holds: its own key and each verifier's bytes.
    static func heldSecrets(_ environment: [String: String]) -> [[UInt8]] {
        var held: [[UInt8]] = []
        for (name, value) in environment where name.hasPrefix("KONTO_") && (name.hasSuffix("_WIRE_KEY") || name.hasSuffix("_WIRE_VERIFIERS")) {
            for entry in value.split(separator: ",") {
                let hex = entry.split(separator: ":").last.map(String.init) ?? ""
                if let bytes = WireSecret.hexBytes(hex) { held.append(bytes) }
            }
        }
        return held
    }

    static func isolation(_ http: RawHTTP, system: EndToEndSystem) async throws {
        let port = { (name: String) in system.stack.environment["KONTO_\(name)_PORT"].flatMap(Int.init) }
        let ports = [
            IdentityContract.serviceName: try #require(port("IDENTITY")), ProfileContract.serviceName: try #require(port("PROFILE")),
            NotificationsContract.serviceName: try #require(port("NOTIFICATIONS")),
        ]
        let profile = system.stack.environment(of: "konto-profile")
        let notifications = system.stack.environment(of: "konto-notifications")
        // Neither holds a root, Identity's data key, or (Profile) the mail seal.
        for environment in [profile, notifications] {
            #expect(environment["KONTO_WIRE_SECRET"] == nil && environment["KONTO_IDENTITY_DATA_KEY"] == nil)
        }
        #expect(profile["KONTO_MAIL_SEAL_KEY"] == nil)
        let heldByProfile = Self.heldSecrets(profile), heldByNotifications = Self.heldSecrets(notifications)
        // Profile: its key and the verifiers of the gateway, Identity and the operator's service; Notifications: the
        // verifiers of the gateway, Identity, Profile and the operator's service.
        #expect(heldByProfile.count == 4 && heldByNotifications.count == 4, "\(heldByProfile.count), \(heldByNotifications.count)")

        // Every secret held, used as a caller's key and as a verifier, claiming the gateway or Identity, at every
        // other server: no handshake completes.
        var attempts: [(label: String, client: WireClient)] = []
        for (holder, held) in [(ProfileContract.serviceName, heldByProfile), (NotificationsContract.serviceName, heldByNotifications)] {
            for (index, bytes) in held.enumerated() {
                for claimed in [WireAllowList.gateway, IdentityContract.serviceName] {
                    for (server, serverPort) in ports where server != holder && server != claimed {
                        for secret in [WireSecret(peerKey: bytes, for: claimed), WireSecret(verifier: bytes, caller: claimed, server: server)] {
                            var configuration = WireClient.Configuration(port: serverPort, serviceName: claimed, serverName: server, secret: secret)
                            configuration.connectionCount = 1
                            attempts.append(("\(holder)'s secret \(index) as \(claimed) at \(server) (\(secret.kind))", WireClient(configuration: configuration, logger: EndToEndSystem.logger)))
                        }
                    }
                }
            }
        }
        let tried = attempts
        try await RunningServices.with(tried.map(\.client), logger: EndToEndSystem.logger) {
            for (label, client) in tried {
                let code = await Self.wireCode { _ = try await client.call(HealthContract.check, .init()) }
                #expect(code == WireError.Code.authenticationFailed, "\(label): \(code?.rawValue ?? "completed")")
            }
        }

        // With its own key, Profile publishes only its own events and reaches only its own groups.
        let profileKey = try #require(profile["KONTO_PROFILE_WIRE_KEY"].flatMap(WireSecret.hexBytes))
        var asProfile = WireClient.Configuration(
            port: ports[NotificationsContract.serviceName]!, serviceName: ProfileContract.serviceName, serverName: NotificationsContract.serviceName,
            secret: WireSecret(peerKey: profileKey, for: ProfileContract.serviceName)
        )
        asProfile.connectionCount = 1
        let profileClient = WireClient(configuration: asProfile, logger: EndToEndSystem.logger)
        var asOperator = WireClient.Configuration(
            port: ports[NotificationsContract.serviceName]!, serviceName: "operator-billing", serverName: NotificationsContract.serviceName,
            secret: WireSecret(system.stack.wireSecret)
        )
        asOperator.connectionCount = 1
        let operatorClient = WireClient(configuration: asOperator, logger: EndToEndSystem.logger)
        let (accountId, _) = try await http.signUp(userId: "isolated@example.org", password: password)
        try await RunningServices.with([profileClient, operatorClient], logger: EndToEndSystem.logger) {
            let forbidden = WireError.Code.forbidden
            let mail = MailRequest(message: .passwordReset, to: "isolated@example.org")
            for kind in [AccountEvent.Kind.deletingAccount, .mailRequested(mail), .passwordChanged] {
                let forged = NotificationsPublishRequest(events: [AccountEvent(accountId: accountId, kind: kind)])
                #expect(await Self.wireCode { _ = try await profileClient.call(NotificationsContract.publish, forged) } == forbidden, "\(kind.name)")
            }
            let own = NotificationsPublishRequest(events: [AccountEvent(accountId: accountId, kind: .detailsChanged(keys: ["name"]))])
            #expect(try await profileClient.call(NotificationsContract.publish, own).stored == 1)
            // The operator's group is the operator's: Profile can neither consume it nor look at or replay it.
            _ = try await operatorClient.call(NotificationsContract.declareGroup, NotificationsSubscribeRequest(group: "operator-billing.ledger", types: ["deletingAccount"]))
            #expect(await Self.wireCode { _ = try await profileClient.call(NotificationsContract.declareGroup, NotificationsSubscribeRequest(group: "operator-billing.ledger", types: ["deletingAccount"])) } == forbidden)
            #expect(await Self.wireCode {
                let subscription = try await profileClient.subscribe(NotificationsContract.subscribe, NotificationsSubscribeRequest(group: "operator-billing.ledger", types: ["deletingAccount"]), credit: 1)
                for try await _ in subscription { break }
            } == forbidden)
            // A group of its own for resets or mails is refused: those types are not Profile's to read (issue 69, 9).
            #expect(await Self.wireCode {
                let stolen = try await profileClient.subscribe(
                    NotificationsContract.subscribe, NotificationsSubscribeRequest(group: "profile.resets", types: ["passwordResetRequested", "mailRequested"]), credit: 8
                )
                for try await _ in stolen { break }
            } == forbidden)
            // What the reset's events carry is sealed for the courier all the same: read here from Notifications' table
            // (as a thief of its database would), nothing Profile holds opens it.
            #expect(try await http.send("POST", "/v1/password-resets", json: ["userId": "isolated@example.org"]).status == 202)
            let query = "SELECT event::text FROM notifications.events WHERE account_id = '\(accountId)' AND type IN ('passwordResetRequested', 'mailRequested')"
            try await EndToEndSystem.waitUntil(within: .seconds(30), "the reset's events are stored") { try await system.strings(query).count >= 2 }
            var sealed: [SealedResetToken] = []
            for text in try await system.strings(query) {
                switch try JSONDecoder().decode(AccountEvent.self, from: Data(text.utf8)).kind {
                case .passwordResetRequested(_, let token, _): sealed.append(token)
                case .mailRequested(let request): if let token = request.sealedToken { sealed.append(token) }
                default: break
                }
            }
            #expect(sealed.count >= 2, "the reset's two at least (the sign-up's verification mail may be among them)")
            for token in sealed {
                for bytes in heldByProfile {
                    for secret in [WireSecret(bytes: bytes), WireSecret(peerKey: bytes, for: ProfileContract.serviceName)] {
                        #expect(throws: ResetTokenSealError.self) { try ResetTokenSeal(secret: secret).open(token, accountId: accountId) }
                    }
                }
            }
        }
    }
}

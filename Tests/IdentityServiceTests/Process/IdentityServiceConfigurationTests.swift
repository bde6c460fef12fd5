import IdentityService
import KontoRuntime
import KontoWebAuthn
import Logging
import Testing

@Suite("Identity configuration from the environment")
struct IdentityServiceConfigurationTests {
    static let base = ["KONTO_WIRE_SECRET": "identity-configuration-secret-0123456789"]

    static func configuration(_ variables: [String: String]) throws -> IdentityServiceConfiguration {
        try IdentityServiceConfiguration(environment: ServiceEnvironment(base.merging(variables) { _, given in given }), logger: Logger(label: "test"))
    }

    @Test("clean-up delay and stale reservation age: the defaults, a value, and the floor of the Profile timeout + 5 s")
    func cleanUpTimes() throws {
        let defaults = try Self.configuration([:])
        #expect(defaults.options.profileCleanupDelay == .seconds(30))
        #expect(defaults.options.staleReservationAge == .seconds(600))

        let set = try Self.configuration(["KONTO_IDENTITY_PROFILE_CLEANUP_SECONDS": "20", "KONTO_IDENTITY_STALE_RESERVATION_SECONDS": "60"])
        #expect(set.options.profileCleanupDelay == .seconds(20))
        #expect(set.options.staleReservationAge == .seconds(60))

        // Shorter than a Profile call may take: a late create, or a live sign-up, would be taken for a dead one.
        let floored = try Self.configuration([
            "KONTO_IDENTITY_PROFILE_TIMEOUT_MS": "3000",
            "KONTO_IDENTITY_PROFILE_CLEANUP_SECONDS": "1",
            "KONTO_IDENTITY_STALE_RESERVATION_SECONDS": "2",
        ])
        #expect(floored.options.profileCleanupDelay == .seconds(8))
        #expect(floored.options.staleReservationAge == .seconds(8))
    }

    @Test("the prune interval: ten minutes by default, a value, and a refusal naming the variable")
    func pruneInterval() throws {
        #expect(try Self.configuration([:]).options.pruneInterval == .seconds(600))
        #expect(try Self.configuration(["KONTO_IDENTITY_PRUNE_SECONDS": "60"]).options.pruneInterval == .seconds(60))
        for bad in ["0", "never", "86401"] {
            #expect {
                try Self.configuration(["KONTO_IDENTITY_PRUNE_SECONDS": bad])
            } throws: { error in
                "\(error)".contains("KONTO_IDENTITY_PRUNE_SECONDS must be")
            }
        }
    }

    @Test("the TOTP issuer: Konto by default, a name, and a refusal naming the variable for one too long or with a colon")
    func totpIssuer() throws {
        #expect(try Self.configuration([:]).options.totpIssuer == "Konto")
        #expect(try Self.configuration(["KONTO_IDENTITY_TOTP_ISSUER": "Example Health"]).options.totpIssuer == "Example Health")
        // An empty value is no value (the default), as for every setting.
        #expect(try Self.configuration(["KONTO_IDENTITY_TOTP_ISSUER": ""]).options.totpIssuer == "Konto")
        for bad in ["Example:Health", String(repeating: "x", count: 65)] {
            #expect {
                try Self.configuration(["KONTO_IDENTITY_TOTP_ISSUER": bad])
            } throws: { error in
                "\(error)".contains("KONTO_IDENTITY_TOTP_ISSUER must be 1 to 64 characters without a colon")
            }
        }
    }

    @Test("passkeys' relying party: localhost by default; a domain with its origins; HTTPS outside localhost, origins on the RP ID")
    func relyingParty() throws {
        let local = try Self.configuration([:]).options.relyingParty
        #expect(local == .init(id: "localhost", name: "Konto", origins: ["http://localhost:8080"]))
        let production = try Self.configuration([
            "KONTO_WEBAUTHN_RP_ID": "Example.org", "KONTO_WEBAUTHN_RP_NAME": "Example Health",
            "KONTO_WEBAUTHN_ORIGINS": "https://example.org, https://accounts.example.org:8443",
        ]).options.relyingParty
        #expect(production == .init(id: "example.org", name: "Example Health", origins: ["https://example.org", "https://accounts.example.org:8443"]))
        #expect(try Self.configuration(["KONTO_WEBAUTHN_RP_ID": "example.org"]).options.relyingParty.origins == ["https://example.org"])
        let refusals: [([String: String], String)] = [
            (["KONTO_WEBAUTHN_RP_ID": "192.168.1.1"], "KONTO_WEBAUTHN_RP_ID must be a domain name"),
            (["KONTO_WEBAUTHN_RP_ID": "exa mple.org"], "KONTO_WEBAUTHN_RP_ID must be a domain name"),
            (["KONTO_WEBAUTHN_RP_ID": "example..org"], "KONTO_WEBAUTHN_RP_ID must be a domain name"),
            (["KONTO_WEBAUTHN_RP_ID": "example.org", "KONTO_WEBAUTHN_ORIGINS": "http://example.org"], "KONTO_WEBAUTHN_ORIGINS"),
            (["KONTO_WEBAUTHN_RP_ID": "example.org", "KONTO_WEBAUTHN_ORIGINS": "https://example.org.evil.example"], "KONTO_WEBAUTHN_ORIGINS"),
            (["KONTO_WEBAUTHN_RP_ID": "example.org", "KONTO_WEBAUTHN_ORIGINS": "https://notexample.org"], "KONTO_WEBAUTHN_ORIGINS"),
            (["KONTO_WEBAUTHN_RP_ID": "example.org", "KONTO_WEBAUTHN_ORIGINS": "https://example.org/console"], "KONTO_WEBAUTHN_ORIGINS"),
            (["KONTO_WEBAUTHN_ORIGINS": ", ,"], "KONTO_WEBAUTHN_ORIGINS"),
            (["KONTO_WEBAUTHN_RP_NAME": String(repeating: "x", count: 65)], "KONTO_WEBAUTHN_RP_NAME must be 1 to 64 characters"),
        ]
        for (environment, expected) in refusals {
            #expect {
                try Self.configuration(environment)
            } throws: { error in
                "\(error)".contains(expected)
            }
        }
    }
}

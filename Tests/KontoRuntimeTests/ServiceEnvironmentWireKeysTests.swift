import KontoRuntime
import KontoWire
import Testing

/// How a service reads its wire keys (docs/CONFIGURATION.md, "Wire keys"): its own key and its callers' verifiers,
/// or the development root alone; every refusal names the variable and never shows a key.
@Suite struct ServiceEnvironmentWireKeysTests {
    static let key = String(repeating: "1f", count: 32)
    static let verifier = String(repeating: "2e", count: 32)
    static let root = "a-development-root-secret-0123456789abcdef"

    func problem(_ variables: [String: String], calls: Bool = true, serves: Bool = true) -> String? {
        do {
            _ = try ServiceEnvironment(variables).wireKeys(service: "identity", calls: calls, serves: serves)
            return nil
        } catch {
            return error.description
        }
    }

    @Test("its own key and its callers' verifiers: the key calls as this service only, the verifiers accept the listed callers only")
    func ownKeys() throws {
        let keys = try ServiceEnvironment([
            "KONTO_IDENTITY_WIRE_KEY": Self.key.uppercased(),
            "KONTO_IDENTITY_WIRE_VERIFIERS": "gateway:\(Self.verifier)",
        ]).wireKeys(service: "identity", calls: true, serves: true)
        #expect(keys.root == nil)
        #expect(keys.callerKey.kind == .caller("identity"))
        #expect(keys.verifiers.callers == ["gateway"])
        #expect(!keys.verifiers.holdsRoot)
        #expect(keys.verifiers.candidates(caller: "profile", server: "identity").isEmpty)
    }

    @Test("the development root alone derives everything")
    func root() throws {
        let keys = try ServiceEnvironment(["KONTO_WIRE_SECRET": Self.root]).wireKeys(service: "identity", calls: true, serves: true)
        #expect(keys.root != nil && keys.verifiers.holdsRoot)
        #expect(keys.callerKey.kind == .root)
    }

    @Test("a service that serves only needs no key of its own")
    func serverOnly() throws {
        let keys = try ServiceEnvironment(["KONTO_NOTIFICATIONS_WIRE_VERIFIERS": "gateway:\(Self.verifier)"]).wireKeys(service: "notifications", calls: false, serves: true)
        #expect(keys.verifiers.callers == ["gateway"])
    }

    @Test("each refusal names its variable and the way to make the keys, never a key")
    func refusals() {
        let cases: [([String: String], String)] = [
            ([:], "KONTO_IDENTITY_WIRE_KEY and KONTO_IDENTITY_WIRE_VERIFIERS are required (make them with: konto keys), or KONTO_WIRE_SECRET alone for development"),
            (["KONTO_WIRE_SECRET": Self.root, "KONTO_IDENTITY_WIRE_KEY": Self.key], "KONTO_IDENTITY_WIRE_KEY is set together with KONTO_WIRE_SECRET: give the service its own keys only (konto keys)"),
            (["KONTO_IDENTITY_WIRE_VERIFIERS": "gateway:\(Self.verifier)"], "KONTO_IDENTITY_WIRE_KEY is required beside KONTO_IDENTITY_WIRE_VERIFIERS (make it with: konto keys)"),
            (["KONTO_IDENTITY_WIRE_KEY": Self.key], "KONTO_IDENTITY_WIRE_VERIFIERS is required beside KONTO_IDENTITY_WIRE_KEY (make it with: konto keys)"),
            (["KONTO_IDENTITY_WIRE_KEY": String(Self.key.dropLast(2)), "KONTO_IDENTITY_WIRE_VERIFIERS": "gateway:\(Self.verifier)"], "KONTO_IDENTITY_WIRE_KEY must be 64 hexadecimal digits (make it with: konto keys)"),
            (["KONTO_IDENTITY_WIRE_KEY": Self.key, "KONTO_IDENTITY_WIRE_VERIFIERS": "gateway=\(Self.verifier)"], "KONTO_IDENTITY_WIRE_VERIFIERS entry 1 is not CALLER:KEY (make it with: konto keys)"),
            (["KONTO_WIRE_SECRET": "short"], "KONTO_WIRE_SECRET must be at least 32 bytes long (generate one with: openssl rand -hex 32)"),
        ]
        for (variables, expected) in cases {
            let found = problem(variables)
            #expect(found == expected, "\(variables.keys.sorted())")
            #expect(found?.contains(Self.key) != true && found?.contains(Self.verifier) != true)
        }
    }

    @Test("a data key: its own variable, or the development root; never both")
    func dataKey() throws {
        let environment = ServiceEnvironment(["KONTO_WIRE_SECRET": Self.root])
        let keys = try environment.wireKeys(service: "identity", calls: true, serves: true)
        #expect(try environment.dataKey("KONTO_IDENTITY_DATA_KEY", keys: keys).kind == .root)
        let both = ServiceEnvironment(["KONTO_WIRE_SECRET": Self.root, "KONTO_IDENTITY_DATA_KEY": String(repeating: "ab12", count: 16)])
        #expect(throws: ServiceEnvironmentError.self) { try both.dataKey("KONTO_IDENTITY_DATA_KEY", keys: keys) }
        let own = WireKeys(callerKey: WireSecret(peerKey: [1], for: "identity"), verifiers: WireVerifiers(verifiers: []))
        #expect(throws: ServiceEnvironmentError.self) { try ServiceEnvironment([:]).dataKey("KONTO_IDENTITY_DATA_KEY", keys: own) }
        #expect(throws: ServiceEnvironmentError.self) { try ServiceEnvironment(["KONTO_IDENTITY_DATA_KEY": "replace-me"]).dataKey("KONTO_IDENTITY_DATA_KEY", keys: own) }
        _ = try ServiceEnvironment(["KONTO_IDENTITY_DATA_KEY": "0123456789abcdef0123456789abcdef0123456789abcdef"]).dataKey("KONTO_IDENTITY_DATA_KEY", keys: own)
    }
}

import KontoWire
import Testing

/// Each server holds only its callers' verifiers (docs/PROTOCOL.md, "Keys"): what a server holds proves nothing at
/// another server, a caller's key proves only that caller, and during a rotation two verifiers of one caller work.
@Suite("Wire verifiers")
struct WireVerifiersTests {
    static let root = WireSecret("verifiers-root-secret-0123456789abcdef")
    static let nonce = [UInt8](repeating: 5, count: 32)

    /// Whether a server named `server` with `verifiers` completes the handshake of `hello`.
    static func accepts(_ server: String, _ verifiers: WireVerifiers, _ hello: WireHello.ClientHello) -> Bool {
        var machine = ServerConnectionStateMachine(configuration: .init(serverName: server, methods: ["m"], verifiers: verifiers, maxInFlight: 1))
        _ = machine.channelActive(nonce: nonce)
        guard case .write(let frame) = machine.frameReceived(WireFrame(correlationID: 0, message: .hello(.clientHello(hello)))),
              case .welcome = frame.message
        else { return false }
        return true
    }

    static func hello(as caller: String, to server: String, with secret: WireSecret) -> WireHello.ClientHello {
        WireHandshake.clientHello(answering: .init(nonce: nonce), serviceName: caller, serverName: server, secret: secret)
    }

    static func verifier(_ caller: String, at server: String, key: [UInt8]? = nil) -> WireSecret {
        let callerKey = WireSecret(peerKey: key ?? root.peerKeyBytes(for: caller), for: caller)
        return WireSecret(verifier: callerKey.verifierBytes(caller: caller, server: server), caller: caller, server: server)
    }

    @Test("a server with listed verifiers accepts exactly those callers, each proving with its own key")
    func listedCallersOnly() {
        let identity = WireVerifiers(verifiers: [Self.verifier("gateway", at: "identity")])
        let gatewayKey = WireSecret(peerKey: Self.root.peerKeyBytes(for: "gateway"), for: "gateway")
        let profileKey = WireSecret(peerKey: Self.root.peerKeyBytes(for: "profile"), for: "profile")
        #expect(Self.accepts("identity", identity, Self.hello(as: "gateway", to: "identity", with: gatewayKey)))
        // Profile is not listed at Identity, and cannot pass for the gateway with its own key.
        #expect(!Self.accepts("identity", identity, Self.hello(as: "profile", to: "identity", with: profileKey)))
        #expect(!Self.accepts("identity", identity, Self.hello(as: "gateway", to: "identity", with: profileKey)))
        // The root proves nothing a listed verifier does not match... it does derive the same verifier: the root is
        // every key, which is why no service holds it.
        #expect(Self.accepts("identity", identity, Self.hello(as: "gateway", to: "identity", with: Self.root)))
    }

    @Test("what a server holds lets it speak as that caller to itself and to no other server")
    func verifierBoundToItsServer() {
        let heldByProfile = Self.verifier("gateway", at: "profile")
        let identity = WireVerifiers(verifiers: [Self.verifier("gateway", at: "identity")])
        let notifications = WireVerifiers(verifiers: [Self.verifier("gateway", at: "notifications"), Self.verifier("identity", at: "notifications")])
        // Profile, compromised, tries the gateway's verifier it holds at Identity and at Notifications.
        #expect(!Self.accepts("identity", identity, Self.hello(as: "gateway", to: "identity", with: heldByProfile)))
        #expect(!Self.accepts("notifications", notifications, Self.hello(as: "gateway", to: "notifications", with: heldByProfile)))
        // Or names another caller with it.
        #expect(!Self.accepts("notifications", notifications, Self.hello(as: "identity", to: "notifications", with: heldByProfile)))
        // Itself it can reach (a health check from its own container).
        #expect(Self.accepts("profile", WireVerifiers(verifiers: [heldByProfile]), Self.hello(as: "gateway", to: "profile", with: heldByProfile)))
        // A server configured under another name does not accept a verifier made for "identity".
        #expect(!Self.accepts("profile", WireVerifiers(verifiers: [Self.verifier("gateway", at: "identity")]), Self.hello(as: "gateway", to: "identity", with: Self.root)))
    }

    @Test("while a caller's key is rotated its server accepts the old and the new key, and neither once removed")
    func rotation() {
        let old = Self.root.peerKeyBytes(for: "gateway")
        let new = [UInt8](repeating: 0x42, count: 32)
        let both = WireVerifiers(verifiers: [Self.verifier("gateway", at: "identity", key: new), Self.verifier("gateway", at: "identity", key: old)])
        let oldKey = WireSecret(peerKey: old, for: "gateway"), newKey = WireSecret(peerKey: new, for: "gateway")
        #expect(Self.accepts("identity", both, Self.hello(as: "gateway", to: "identity", with: oldKey)))
        #expect(Self.accepts("identity", both, Self.hello(as: "gateway", to: "identity", with: newKey)))
        let newOnly = WireVerifiers(verifiers: [Self.verifier("gateway", at: "identity", key: new)])
        #expect(!Self.accepts("identity", newOnly, Self.hello(as: "gateway", to: "identity", with: oldKey)))
    }

    @Test("the verifier list parses caller:HEX entries and names the first bad one without echoing a key")
    func parsing() throws {
        let hex = WireSecret.hex(Self.verifier("gateway", at: "identity").verifierBytesForTest)
        let parsed = try WireVerifiers.parse("gateway:\(hex), operator-billing:\(hex)\ngateway:\(hex)", server: "identity").get()
        #expect(parsed.callers == ["gateway", "operator-billing"])
        #expect(parsed.candidates(caller: "gateway", server: "identity").count == 2)
        #expect(parsed.candidates(caller: "gateway", server: "profile").isEmpty)
        #expect(!parsed.holdsRoot)
        #expect(!"\(parsed)".contains(hex))
        let secretLooking = String(repeating: "ab", count: 31)
        let cases: [(String, String)] = [
            ("", "lists no caller"),
            ("gateway", "entry 1 is not CALLER:KEY"),
            ("gateway:\(hex),Gateway:\(hex)", "entry 2 names no caller (lower-case letters, digits, - and _)"),
            ("gateway:\(secretLooking)", "entry 1 (gateway) is not 64 hexadecimal digits"),
            ("gateway:\(hex)zz", "entry 1 (gateway) is not 64 hexadecimal digits"),
        ]
        for (text, problem) in cases {
            guard case .failure(let error) = WireVerifiers.parse(text, server: "identity") else {
                Issue.record("accepted: \(text)")
                continue
            }
            #expect(error.problem == problem)
            #expect(!error.problem.contains(secretLooking))
        }
    }

    @Test("descriptions never show a key")
    func redacted() {
        let verifier = Self.verifier("gateway", at: "identity")
        #expect("\(verifier)" == "WireSecret(verifier gateway at identity, <redacted>)")
        #expect("\(WireVerifiers(Self.root))" == "WireVerifiers(deriving from WireSecret(<redacted>))")
        #expect(WireVerifiers(Self.root).holdsRoot)
    }
}

extension WireSecret {
    /// A verifier's bytes, for the parsing test (a verifier derives nothing further).
    fileprivate var verifierBytesForTest: [UInt8] {
        guard case .verifier(let caller, let server) = kind else { return [] }
        return verifierBytes(caller: caller, server: server)
    }
}

import KontoWire

/// One service's wire credentials as its environment gives them (docs/CONFIGURATION.md, "Wire keys").
public struct WireKeys: Sendable {
    /// What the service calls with: its own key, or the root in development.
    public var callerKey: WireSecret
    /// Whom it accepts: its callers' verifiers, or derived from the root in development.
    public var verifiers: WireVerifiers
    /// Set only in development (`KONTO_WIRE_SECRET`): a process with it can speak as any service.
    public var root: WireSecret?

    public init(callerKey: WireSecret, verifiers: WireVerifiers, root: WireSecret? = nil) {
        self.callerKey = callerKey
        self.verifiers = verifiers
        self.root = root
    }

    /// Everything derived from the root (the dev stack, tests).
    public init(root: WireSecret) {
        self.init(callerKey: root, verifiers: WireVerifiers(root), root: root)
    }
}

extension ServiceEnvironment {
    /// `KONTO_<SERVICE>_WIRE_KEY` (its own key, 64 hex digits; read where the service calls others) and
    /// `KONTO_<SERVICE>_WIRE_VERIFIERS` (`caller:HEX` for each caller it accepts; where it serves), or, for
    /// development only, `KONTO_WIRE_SECRET` alone: the root every key derives from. Mixing the two is refused, as is
    /// anything missing. `konto keys` makes them.
    public func wireKeys(service: String, calls: Bool, serves: Bool) throws(ServiceEnvironmentError) -> WireKeys {
        let prefix = "KONTO_\(service.uppercased())_WIRE_"
        let keyVariable = prefix + "KEY", verifiersVariable = prefix + "VERIFIERS"
        let own = [keyVariable, verifiersVariable].filter { string($0) != nil }
        if string("KONTO_WIRE_SECRET") != nil || own.isEmpty {
            if let first = own.first {
                throw ServiceEnvironmentError(variable: first, problem: "is set together with KONTO_WIRE_SECRET: give the service its own keys only (konto keys)")
            }
            guard string("KONTO_WIRE_SECRET") != nil else {
                let needed = (calls ? [keyVariable] : []) + (serves ? [verifiersVariable] : [])
                throw ServiceEnvironmentError(
                    variable: needed.joined(separator: " and "),
                    problem: (needed.count > 1 ? "are" : "is") + " required (make them with: konto keys), or KONTO_WIRE_SECRET alone for development"
                )
            }
            return WireKeys(root: WireSecret(try secret("KONTO_WIRE_SECRET")))
        }
        var callerKey: WireSecret?
        if calls {
            guard let text = string(keyVariable) else {
                throw ServiceEnvironmentError(variable: keyVariable, problem: "is required beside \(verifiersVariable) (make it with: konto keys)")
            }
            guard let bytes = WireSecret.hexBytes(text), bytes.count == 32 else {
                throw ServiceEnvironmentError(variable: keyVariable, problem: "must be 64 hexadecimal digits (make it with: konto keys)")
            }
            callerKey = WireSecret(peerKey: bytes, for: service)
        }
        var verifiers = WireVerifiers(verifiers: [])
        if serves {
            guard let text = string(verifiersVariable) else {
                throw ServiceEnvironmentError(variable: verifiersVariable, problem: "is required beside \(keyVariable) (make it with: konto keys)")
            }
            switch WireVerifiers.parse(text, server: service) {
            case .success(let parsed): verifiers = parsed
            case .failure(let error): throw ServiceEnvironmentError(variable: verifiersVariable, problem: "\(error.problem) (make it with: konto keys)")
            }
        }
        // A service that calls no one is given no key: it proves nothing with this placeholder, which no server accepts.
        return WireKeys(callerKey: callerKey ?? WireSecret(peerKey: [], for: service), verifiers: verifiers)
    }

    /// A key of the deployment's own for `name` (at least 32 bytes of random text, e.g. `openssl rand -hex 32`),
    /// or, where the service holds the development root, the root itself (so data sealed before keeps opening).
    public func dataKey(_ name: String, keys: WireKeys) throws(ServiceEnvironmentError) -> WireSecret {
        if let root = keys.root {
            if string(name) != nil {
                throw ServiceEnvironmentError(variable: name, problem: "is set together with KONTO_WIRE_SECRET: give the service its own keys only (konto keys)")
            }
            return root
        }
        return WireSecret(try secret(name))
    }
}

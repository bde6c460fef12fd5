import KontoModel
import KontoWire

extension WireMethod {
    /// A method whose requests carry secrets (passwords): in ``AccountDetails`` and as ``SecretString``.
    ///
    /// Only requests of such methods are encoded with their secrets; every other method leaves the secrets
    /// of ``AccountDetails`` out and refuses to encode a ``SecretString`` at all. Responses never carry them.
    public static func carryingSecrets(_ name: String) -> WireMethod {
        WireMethod(name, codingUserInfo: [.accountDetailsIncludeSecrets: true])
    }

    /// Whether requests of this method carry secrets.
    public var carriesSecrets: Bool {
        codingUserInfo[.accountDetailsIncludeSecrets] == true
    }
}

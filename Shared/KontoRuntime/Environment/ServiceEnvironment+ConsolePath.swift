extension ServiceEnvironment {
    /// Where the web console is served unless `KONTO_GATEWAY_CONSOLE_PATH` says otherwise.
    public static let defaultConsolePath = "/account"

    /// `KONTO_GATEWAY_CONSOLE_PATH`: where the gateway serves the web console (nil: `off`). The one source of the
    /// console's path: the gateway's routes, its banner and the links in Notifications' mail all read it here, so a
    /// moved console gets mail that points into it.
    public func consolePath() throws(ServiceEnvironmentError) -> String? {
        try Self.consolePath(string("KONTO_GATEWAY_CONSOLE_PATH", default: Self.defaultConsolePath))
    }

    /// `off` (nil), or a path of one or more segments of `a-z 0-9 - _` starting with `/`, without a trailing `/`.
    public static func consolePath(_ value: String) throws(ServiceEnvironmentError) -> String? {
        guard value != "off" else { return nil }
        let segments = value.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let valid = value.hasPrefix("/") && value.utf8.count <= 64 && !segments.isEmpty && segments.allSatisfy { segment in
            !segment.isEmpty && segment.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
        }
        guard valid, !value.hasPrefix("/v1/"), !value.hasPrefix("/health/"), value != "/v1", value != "/health", value != "/metrics", value != "/openapi.json" else {
            throw ServiceEnvironmentError(variable: "KONTO_GATEWAY_CONSOLE_PATH", problem: "must be off or a path such as /account (lowercase letters, digits, - and _; not an API path)")
        }
        return value
    }
}

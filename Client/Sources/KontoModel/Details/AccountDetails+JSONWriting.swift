extension AccountDetails {
    /// Appends the flat JSON object that `encode(to:)` produces, without `JSONEncoder`: secrets only when asked for.
    public func writeJSON(into output: inout [UInt8], includingSecrets: Bool = false) throws(AccountValue.JSONWriteError) {
        output.append(UInt8(ascii: "{"))
        var first = true
        for (identifier, value) in storedValues where includingSecrets || !isSecret(identifier) {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            AccountValue.writeJSONString(identifier, into: &output)
            output.append(UInt8(ascii: ":"))
            try value.writeJSON(into: &output)
        }
        output.append(UInt8(ascii: "}"))
    }
}

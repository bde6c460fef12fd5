import KontoModel
import KontoWire
import NIOCore

/// Every request with a session begins with this check (an uncached read makes it once), so it skips Foundation's
/// JSON coders.
extension IdentitySessionRequest: WireJSONCodable {
    public init(wireJSON bytes: ByteBufferView) throws {
        let object = try WireJSONObject(bytes)
        self.init(token: BearerToken(try object.string("token")))
    }

    public func writeWireJSON(into output: inout [UInt8]) throws {
        output.append(contentsOf: #"{"token":"#.utf8)
        AccountValue.writeJSONString(token.value, into: &output)
        output.append(UInt8(ascii: "}"))
    }
}

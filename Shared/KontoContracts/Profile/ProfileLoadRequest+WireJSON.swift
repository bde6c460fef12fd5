import KontoModel
import KontoWire
import NIOCore

/// The most frequent request of all, so it skips Foundation's JSON coders.
extension ProfileLoadRequest: WireJSONCodable {
    public init(wireJSON bytes: ByteBufferView) throws {
        let object = try WireJSONObject(bytes)
        self.init(accountId: try object.string("accountId"), keys: try object.optionalStrings("keys"))
    }

    public func writeWireJSON(into output: inout [UInt8]) throws {
        output.append(contentsOf: #"{"accountId":"#.utf8)
        AccountValue.writeJSONString(accountId, into: &output)
        if let keys {
            output.append(contentsOf: #","keys":["#.utf8)
            for (index, key) in keys.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                AccountValue.writeJSONString(key, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        }
        output.append(UInt8(ascii: "}"))
    }
}

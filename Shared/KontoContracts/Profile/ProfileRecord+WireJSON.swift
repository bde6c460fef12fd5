import KontoModel
import KontoWire
import NIOCore

/// Every load, create and modify answers with a record, so it skips Foundation's JSON coders.
extension ProfileRecord: WireJSONCodable {
    public init(wireJSON bytes: ByteBufferView) throws {
        let object = try WireJSONObject(bytes)
        self.init(
            accountId: try object.string("accountId"),
            details: AccountDetails(values: try object.object("details")),
            version: try object.int64("version")
        )
    }

    public func writeWireJSON(into output: inout [UInt8]) throws {
        output.append(contentsOf: #"{"accountId":"#.utf8)
        AccountValue.writeJSONString(accountId, into: &output)
        output.append(contentsOf: #","details":"#.utf8)
        try details.writeJSON(into: &output)
        output.append(contentsOf: #","version":"#.utf8)
        output.append(contentsOf: String(version).utf8)
        output.append(UInt8(ascii: "}"))
    }
}

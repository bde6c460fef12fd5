/// A method's name and types, declared once and used by both the server (`register`) and the
/// client (`call`), so the two sides cannot disagree about names or types.
public struct WireMethod<Request: Codable & Sendable, Response: Codable & Sendable>: Sendable, Hashable {
    public let name: String
    /// Given to the JSON encoder and decoder of this method's requests. A contract sets a flag here to
    /// let a request carry what payload types otherwise refuse to encode (e.g. secrets between services;
    /// see KontoContracts), so only methods declared that way can carry it.
    public let codingUserInfo: [CodingUserInfoKey: Bool]

    public init(
        _ name: String,
        request: Request.Type = Request.self,
        response: Response.Type = Response.self,
        codingUserInfo: [CodingUserInfoKey: Bool] = [:]
    ) {
        self.name = name
        self.codingUserInfo = codingUserInfo
    }
}

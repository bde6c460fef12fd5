/// A method's name and types, declared once and used by both the server (`register`) and the
/// client (`call`), so the two sides cannot disagree about names or types.
public struct WireMethod<Request: Codable & Sendable, Response: Codable & Sendable>: Sendable, Hashable {
    public let name: String

    public init(_ name: String, request: Request.Type = Request.self, response: Response.Type = Response.self) {
        self.name = name
    }
}

import Foundation
import KontoContracts
import KontoModel
import KontoWire
import NIOCore
import Testing

/// The hand-written JSON of the hot Profile payloads must mean what their Codable form means, both ways.
@Suite("Profile payloads: direct JSON")
struct ProfileWireJSONTests {
    static let records = [
        ProfileRecord(accountId: "acc-1", details: AccountDetails(), version: 1),
        ProfileRecord(
            accountId: "'; DROP TABLE profile_accounts; -- \"😀\"",
            details: AccountDetails(values: [
                "name": .object(["givenName": .string("שלום"), "familyName": .string("e\u{301}\\")]),
                "dateOfBirth": .string("1815-12-10"),
                "tags": .array([.string("a"), .integer(-3), .double(0.5), .null, .bool(false)]),
            ]),
            version: Int64.max
        ),
    ]

    static let loads = [
        ProfileLoadRequest(accountId: "acc-1"),
        ProfileLoadRequest(accountId: "acc-\"2\"\n", keys: []),
        ProfileLoadRequest(accountId: "acc-3", keys: ["name", "dateOfBirth", "e\u{301}mail"]),
    ]

    @Test("a record written directly decodes with JSONDecoder, and one from JSONEncoder reads directly", arguments: records)
    func recordBothWays(_ record: ProfileRecord) throws {
        var bytes: [UInt8] = []
        try record.writeWireJSON(into: &bytes)
        #expect(try JSONDecoder().decode(ProfileRecord.self, from: Data(bytes)) == record)
        let encoded = try JSONEncoder().encode(record)
        #expect(try ProfileRecord(wireJSON: ByteBuffer(bytes: encoded).readableBytesView) == record)
    }

    @Test("a load request written directly decodes with JSONDecoder, and one from JSONEncoder reads directly", arguments: loads)
    func loadBothWays(_ request: ProfileLoadRequest) throws {
        var bytes: [UInt8] = []
        try request.writeWireJSON(into: &bytes)
        #expect(try JSONDecoder().decode(ProfileLoadRequest.self, from: Data(bytes)) == request)
        let encoded = try JSONEncoder().encode(request)
        #expect(try ProfileLoadRequest(wireJSON: ByteBuffer(bytes: encoded).readableBytesView) == request)
    }

    @Test("null keys mean all keys, and unknown members are ignored, as JSONDecoder reads them")
    func lenientWhereJSONDecoderIs() throws {
        let request = try ProfileLoadRequest(wireJSON: ByteBuffer(string: #"{"accountId":"a","keys":null,"extra":[1]}"#).readableBytesView)
        #expect(request == ProfileLoadRequest(accountId: "a", keys: nil))
        let record = try ProfileRecord(wireJSON: ByteBuffer(string: #"{"version":2.0,"details":{},"accountId":"a","x":1}"#).readableBytesView)
        #expect(record == ProfileRecord(accountId: "a", details: AccountDetails(), version: 2))
    }

    @Test("what JSONDecoder refuses is refused", arguments: [
        #""#, #"[]"#, #"{"accountId":1}"#, #"{"keys":["a"]}"#, #"{"accountId":"a","keys":"name"}"#,
        #"{"accountId":"a","keys":[1]}"#, #"{"accountId":"a"} trailing"#, #"{"accountId":"a\#u{1}"}"#,
    ])
    func refusedLoads(_ payload: String) {
        #expect(throws: (any Error).self) { try ProfileLoadRequest(wireJSON: ByteBuffer(string: payload).readableBytesView) }
        #expect(throws: (any Error).self) { try JSONDecoder().decode(ProfileLoadRequest.self, from: Data(payload.utf8)) }
    }

    @Test("a record with a missing or mistyped member is refused", arguments: [
        #"{"accountId":"a","details":{}}"#, #"{"accountId":"a","details":[],"version":1}"#,
        #"{"accountId":"a","details":{},"version":1.5}"#, #"{"accountId":null,"details":{},"version":1}"#,
    ])
    func refusedRecords(_ payload: String) {
        #expect(throws: (any Error).self) { try ProfileRecord(wireJSON: ByteBuffer(string: payload).readableBytesView) }
        #expect(throws: (any Error).self) { try JSONDecoder().decode(ProfileRecord.self, from: Data(payload.utf8)) }
    }
}

import Foundation
@testable import GatewayService
import Testing

@Suite("Gateway date transcoder")
struct GatewayDateTranscoderTests {
    static let moment = Date(timeIntervalSince1970: 1_795_000_000)

    @Test("RFC 3339 times are read with or without fractional seconds, at any offset up to ±23:59; others are refused")
    func reads() throws {
        let transcoder = GatewayDateTranscoder()
        #expect(try transcoder.decode("2026-11-18T11:06:40Z") == Self.moment)
        #expect(try transcoder.decode("2026-11-18T11:06:40.250Z") == Self.moment.addingTimeInterval(0.25))
        #expect(try transcoder.decode("2026-11-18T13:06:40+02:00") == Self.moment)
        // Beyond Foundation's ±18:00, as RFC 3339's grammar allows.
        #expect(try transcoder.decode("2026-11-19T07:06:40+20:00") == Self.moment)
        #expect(try transcoder.decode("2026-11-17T15:45:40-19:21") == Self.moment)
        #expect(try transcoder.decode("2026-11-19T07:06:40.500+20:00") == Self.moment.addingTimeInterval(0.5))
        for text in ["", "yesterday", "2026-11-18", "2026-11-18T08:26:40", "2026-11-18T08:26:40+24:00", "x+02:00"] {
            #expect(throws: DecodingError.self, "\(text)") { try transcoder.decode(text) }
        }
        #expect(try transcoder.encode(Self.moment) == "2026-11-18T11:06:40Z")
    }
}

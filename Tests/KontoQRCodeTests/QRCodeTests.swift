import Foundation
import KontoQRCode
import KontoTestSupport
import Testing

/// The QR encoder against a decoder no one here wrote: zxing-cpp (PyPI), installed by scripts/test.sh, reads every
/// code back. Without it the judged test is skipped, except on CI, which always runs through scripts/test.sh.
@Suite("QR codes")
struct QRCodeTests {
    static let python = ProcessInfo.processInfo.environment["KONTO_ZXING_PYTHON"]
    static let onCI = ProcessInfo.processInfo.environment["CI"] != nil

    /// The longest text each version holds at level M in byte mode.
    static let capacities = [14, 26, 42, 62, 84, 106, 122, 152, 180, 213, 251, 287, 331, 362, 412, 450, 504, 560, 624, 666]

    @Test("the smallest version that holds the text, 21 + 4 modules per version; beyond version 20 a clear error")
    func versions() throws {
        for (index, capacity) in Self.capacities.enumerated() {
            let code = try QRCode(String(repeating: "a", count: capacity))
            #expect(code.version == index + 1, "\(capacity) bytes")
            #expect(code.size == 17 + 4 * (index + 1))
            if index < 19 { #expect(try QRCode(String(repeating: "a", count: capacity + 1)).version == index + 2) }
        }
        #expect(throws: QRCode.TooLong.self) { try QRCode(String(repeating: "a", count: 667)) }
        // The finder patterns are where the standard puts them.
        let code = try QRCode("otpauth://totp/Konto:ada@example.org?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Konto")
        for (x, y) in [(0, 0), (code.size - 7, 0), (0, code.size - 7)] {
            #expect((0..<7).allSatisfy { code.modules[y][x + $0] && code.modules[y + 6][x + $0] && code.modules[y + $0][x] && code.modules[y + $0][x + 6] })
            #expect(!code.modules[y + 1][x + 1] && code.modules[y + 3][x + 3])
        }
    }

    @Test("rendered as SVG (dark modules on white, a quiet zone) and for the terminal (half blocks)")
    func rendering() throws {
        let code = try QRCode("hello")
        let svg = code.svg()
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 29 29\""))
        #expect(svg.components(separatedBy: "h1v1h-1z").count - 1 == code.modules.joined().filter { $0 }.count)
        let lines = code.terminal().split(separator: "\n")
        #expect(lines.count == (code.size + 4 + 1) / 2)
        #expect(lines.allSatisfy { $0.count == code.size + 4 })
    }

    @Test("zxing-cpp decodes a code of every version, otpauth URIs, and UTF-8 text", .enabled(if: python != nil || onCI, "KONTO_ZXING_PYTHON is not set (scripts/test.sh sets it)"))
    func judged() async throws {
        guard let python = Self.python else {
            Issue.record("CI is set, but KONTO_ZXING_PYTHON is not: CI runs the tests through scripts/test.sh, which installs zxing-cpp and sets it")
            return
        }
        var texts = Self.capacities.enumerated().map { index, capacity in
            String((0..<capacity).map { Character(UnicodeScalar(UInt8(33 + ($0 * 7 + index) % 90))) })
        }
        texts.append("otpauth://totp/Konto:ada@example.org?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Konto")
        texts.append("otpauth://totp/Konto:\(String(repeating: "long.name", count: 30))@example.org?secret=GEZDGNBVGY3TQOJQ&issuer=Konto")
        texts.append("Grüße, 世界")
        // One code per line: its size, then its modules row by row as 0 and 1.
        let input = try texts.map { text in
            let code = try QRCode(text)
            return "\(code.size) " + code.modules.map { $0.map { $0 ? "1" : "0" }.joined() }.joined()
        }.joined(separator: "\n") + "\n"
        let script = """
            import sys, numpy, zxingcpp
            for line in sys.stdin:
                size, bits = line.split()
                size = int(size)
                quiet, scale = 4, 4
                image = numpy.full(((size + 2 * quiet) * scale,) * 2, 255, dtype=numpy.uint8)
                for index, bit in enumerate(bits):
                    if bit == "1":
                        y, x = divmod(index, size)
                        image[(y + quiet) * scale:(y + quiet + 1) * scale, (x + quiet) * scale:(x + quiet + 1) * scale] = 0
                found = zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormat.QRCode)
                print(found[0].bytes.hex() if found else "none")
            """
        let run = try await ServiceProcess.run(python, arguments: ["-c", script], input: input)
        #expect(run.status == 0, "\(run.standardError)")
        let decoded = run.standardOutput.split(separator: "\n").map(String.init)
        #expect(decoded.count == texts.count)
        for (text, hex) in zip(texts, decoded) {
            let expected = Array(text.utf8).map { String(format: "%02x", $0) }.joined()
            #expect(hex == expected, "version \((try? QRCode(text))?.version ?? 0): \(text.prefix(40))")
        }
    }
}

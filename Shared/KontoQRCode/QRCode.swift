/// A QR code (ISO/IEC 18004) of a short text in byte mode at error-correction level M, versions 1 to 20 (up to 666
/// bytes): enough for an `otpauth://` URI, which the web console shows as an SVG and `konto factors totp` prints
/// in the terminal.
///
/// Why not a package: none is in the package mirror (the Swift QR libraries there are Apple-only, over CoreImage).
/// The encoder is the standard's algorithm as Project Nayuki's reference implementation lays it out; the tests check
/// it against a decoder no one here wrote (zxing-cpp from PyPI) at every version.
public struct QRCode: Sendable, Equatable {
    /// Modules by row, then column; true is dark. No quiet zone.
    public let modules: [[Bool]]
    public let version: Int
    public var size: Int { modules.count }

    public struct TooLong: Error, CustomStringConvertible {
        public var bytes: Int
        public var description: String { "\(bytes) bytes do not fit in a QR code of version 20 at level M (666 at most)" }
    }

    /// The smallest code at level M that holds `text` (UTF-8, byte mode).
    public init(_ text: String) throws(TooLong) {
        let data = Array(text.utf8)
        guard let version = (1...20).first(where: { Self.dataCapacity(version: $0) * 8 >= Self.bitLength(bytes: data.count, version: $0) }) else {
            throw TooLong(bytes: data.count)
        }
        self.version = version
        var builder = Builder(version: version)
        let codewords = Self.codewords(data: data, version: version)
        builder.drawFunctionPatterns()
        builder.drawCodewords(codewords)
        var best: (penalty: Int, mask: Int) = (.max, 0)
        for mask in 0..<8 {
            builder.applyMask(mask)
            builder.drawFormatBits(mask: mask)
            let penalty = builder.penalty()
            if penalty < best.penalty { best = (penalty, mask) }
            builder.applyMask(mask)  // XOR again: undone
        }
        builder.applyMask(best.mask)
        builder.drawFormatBits(mask: best.mask)
        modules = builder.modules
    }

    // MARK: Level M, versions 1 to 20

    /// Per version: error-correction codewords per block, and the blocks' data codeword counts.
    private static let blocks: [(ecc: Int, data: [Int])] = [
        (10, [16]), (16, [28]), (26, [44]), (18, [32, 32]), (24, [43, 43]),
        (16, [27, 27, 27, 27]), (18, [31, 31, 31, 31]), (22, [38, 38, 39, 39]), (22, [36, 36, 36, 37, 37]),
        (26, [43, 43, 43, 43, 44]),
        (30, [50] + Array(repeating: 51, count: 4)), (22, Array(repeating: 36, count: 6) + [37, 37]),
        (22, Array(repeating: 37, count: 8) + [38]), (24, Array(repeating: 40, count: 4) + Array(repeating: 41, count: 5)),
        (24, Array(repeating: 41, count: 5) + Array(repeating: 42, count: 5)), (28, Array(repeating: 45, count: 7) + Array(repeating: 46, count: 3)),
        (28, Array(repeating: 46, count: 10) + [47]), (26, Array(repeating: 43, count: 9) + Array(repeating: 44, count: 4)),
        (26, Array(repeating: 44, count: 3) + Array(repeating: 45, count: 11)), (26, Array(repeating: 41, count: 3) + Array(repeating: 42, count: 13)),
    ]

    static func dataCapacity(version: Int) -> Int { blocks[version - 1].data.reduce(0, +) }

    /// Mode indicator, character count and the data.
    static func bitLength(bytes: Int, version: Int) -> Int {
        let countBits = version <= 9 ? 8 : 16
        guard bytes < 1 << countBits else { return .max }
        return 4 + countBits + 8 * bytes
    }

    /// The data bits padded to the version's capacity, split into blocks, each with its Reed-Solomon codewords, and
    /// interleaved.
    static func codewords(data: [UInt8], version: Int) -> [UInt8] {
        var bits: [Bool] = []
        func append(_ value: Int, _ count: Int) {
            for index in (0..<count).reversed() { bits.append((value >> index) & 1 == 1) }
        }
        append(0b0100, 4)
        append(data.count, version <= 9 ? 8 : 16)
        for byte in data { append(Int(byte), 8) }
        let capacity = dataCapacity(version: version) * 8
        append(0, min(4, capacity - bits.count))
        append(0, (8 - bits.count % 8) % 8)
        var padding = [0xEC, 0x11].makeIterator()
        var bytes = stride(from: 0, to: bits.count, by: 8).map { start in
            bits[start..<start + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
        }
        while bytes.count < capacity / 8 {
            if let pad = padding.next() { bytes.append(UInt8(pad)) } else { padding = [0xEC, 0x11].makeIterator() }
        }
        let layout = blocks[version - 1]
        let divisor = reedSolomonDivisor(degree: layout.ecc)
        var dataBlocks: [[UInt8]] = []
        var eccBlocks: [[UInt8]] = []
        var offset = 0
        for length in layout.data {
            let block = Array(bytes[offset..<offset + length])
            offset += length
            dataBlocks.append(block)
            eccBlocks.append(reedSolomonRemainder(block, divisor: divisor))
        }
        var result: [UInt8] = []
        for index in 0..<(layout.data.max() ?? 0) {
            for block in dataBlocks where index < block.count { result.append(block[index]) }
        }
        for index in 0..<layout.ecc {
            for block in eccBlocks { result.append(block[index]) }
        }
        return result
    }

    // MARK: Reed-Solomon over GF(2^8) with x^8 + x^4 + x^3 + x^2 + 1

    static func multiply(_ x: UInt8, _ y: UInt8) -> UInt8 {
        var z = 0
        for index in (0..<8).reversed() {
            z = (z << 1) ^ ((z >> 7) * 0x11D)
            z ^= ((Int(y) >> index) & 1) * Int(x)
        }
        return UInt8(z)
    }

    static func reedSolomonDivisor(degree: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: degree)
        result[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for index in 0..<degree {
                result[index] = multiply(result[index], root)
                if index + 1 < degree { result[index] ^= result[index + 1] }
            }
            root = multiply(root, 0x02)
        }
        return result
    }

    static func reedSolomonRemainder(_ data: [UInt8], divisor: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: divisor.count)
        for byte in data {
            let factor = byte ^ result.removeFirst()
            result.append(0)
            for index in result.indices { result[index] ^= multiply(divisor[index], factor) }
        }
        return result
    }

    // MARK: The matrix

    struct Builder {
        let version: Int
        let size: Int
        var modules: [[Bool]]
        var isFunction: [[Bool]]

        init(version: Int) {
            self.version = version
            size = version * 4 + 17
            modules = Array(repeating: Array(repeating: false, count: size), count: size)
            isFunction = modules
        }

        mutating func set(_ x: Int, _ y: Int, _ dark: Bool) {
            modules[y][x] = dark
            isFunction[y][x] = true
        }

        mutating func drawFunctionPatterns() {
            for index in 0..<size {
                set(6, index, index % 2 == 0)
                set(index, 6, index % 2 == 0)
            }
            for (x, y) in [(3, 3), (size - 4, 3), (3, size - 4)] {
                for dy in -4...4 {
                    for dx in -4...4 where (0..<size).contains(x + dx) && (0..<size).contains(y + dy) {
                        let distance = max(abs(dx), abs(dy))
                        set(x + dx, y + dy, distance != 2 && distance != 4)
                    }
                }
            }
            let positions = alignmentPositions
            for (i, x) in positions.enumerated() {
                for (j, y) in positions.enumerated() {
                    let last = positions.count - 1
                    if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                    for dy in -2...2 {
                        for dx in -2...2 { set(x + dx, y + dy, max(abs(dx), abs(dy)) != 1) }
                    }
                }
            }
            drawFormatBits(mask: 0)  // reserves the area; drawn again once the mask is chosen
            if version >= 7 {
                var remainder = version
                for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
                let bits = version << 12 | remainder
                for index in 0..<18 {
                    let dark = (bits >> index) & 1 == 1
                    let a = size - 11 + index % 3, b = index / 3
                    set(a, b, dark)
                    set(b, a, dark)
                }
            }
        }

        var alignmentPositions: [Int] {
            guard version > 1 else { return [] }
            let count = version / 7 + 2
            let step = version == 32 ? 26 : (version * 4 + count * 2 + 1) / (count * 2 - 2) * 2
            var result = [6]
            var position = size - 7
            var rest: [Int] = []
            for _ in 0..<(count - 1) {
                rest.insert(position, at: 0)
                position -= step
            }
            result += rest
            return result
        }

        mutating func drawFormatBits(mask: Int) {
            // Level M is 0b00.
            let data = 0 << 3 | mask
            var remainder = data
            for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
            let bits = (data << 10 | remainder) ^ 0x5412
            func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
            for index in 0...5 { set(8, index, bit(index)) }
            set(8, 7, bit(6))
            set(8, 8, bit(7))
            set(7, 8, bit(8))
            for index in 9..<15 { set(14 - index, 8, bit(index)) }
            for index in 0..<8 { set(size - 1 - index, 8, bit(index)) }
            for index in 8..<15 { set(8, size - 15 + index, bit(index)) }
            set(8, size - 8, true)
        }

        mutating func drawCodewords(_ codewords: [UInt8]) {
            var index = 0
            var right = size - 1
            while right >= 1 {
                if right == 6 { right = 5 }
                for vertical in 0..<size {
                    for offset in 0..<2 {
                        let x = right - offset
                        let upward = (right + 1) & 2 == 0
                        let y = upward ? size - 1 - vertical : vertical
                        if !isFunction[y][x] && index < codewords.count * 8 {
                            modules[y][x] = (codewords[index >> 3] >> (7 - UInt8(index & 7))) & 1 == 1
                            index += 1
                        }
                    }
                }
                right -= 2
            }
        }

        mutating func applyMask(_ mask: Int) {
            for y in 0..<size {
                for x in 0..<size where !isFunction[y][x] {
                    let invert = switch mask {
                    case 0: (x + y) % 2 == 0
                    case 1: y % 2 == 0
                    case 2: x % 3 == 0
                    case 3: (x + y) % 3 == 0
                    case 4: (x / 3 + y / 2) % 2 == 0
                    case 5: x * y % 2 + x * y % 3 == 0
                    case 6: (x * y % 2 + x * y % 3) % 2 == 0
                    default: ((x + y) % 2 + x * y % 3) % 2 == 0
                    }
                    if invert { modules[y][x].toggle() }
                }
            }
        }

        /// The standard's four penalty rules (runs, 2×2 blocks, finder-like patterns, dark balance).
        func penalty() -> Int {
            var result = 0
            let lines = modules + (0..<size).map { x in modules.map { $0[x] } }
            for line in lines {
                var run = 1
                for index in 1..<size {
                    if line[index] == line[index - 1] {
                        run += 1
                    } else {
                        if run >= 5 { result += 3 + run - 5 }
                        run = 1
                    }
                }
                if run >= 5 { result += 3 + run - 5 }
                let pattern: [Bool] = [true, false, true, true, true, false, true]
                let light = [Bool](repeating: false, count: 4)
                for start in 0...(size - 11) {
                    let window = Array(line[start..<start + 11])
                    if window == light + pattern || window == pattern + light { result += 40 }
                }
            }
            for y in 0..<(size - 1) {
                for x in 0..<(size - 1) {
                    let color = modules[y][x]
                    if color == modules[y][x + 1] && color == modules[y + 1][x] && color == modules[y + 1][x + 1] { result += 3 }
                }
            }
            let dark = modules.reduce(0) { $0 + $1.filter { $0 }.count }
            let total = size * size
            // Total is odd, so the balance is never exactly half and k is at least 0.
            result += ((abs(dark * 20 - total * 10) + total - 1) / total - 1) * 10
            return result
        }
    }
}

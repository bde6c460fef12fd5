extension QRCode {
    /// The modules as an SVG path's `d` (a unit square per dark module, offset by `quietZone`): letters and digits
    /// only, so a page template may write it escaped.
    public func svgPath(quietZone: Int = 4) -> String {
        var path = ""
        for (y, row) in modules.enumerated() {
            for (x, dark) in row.enumerated() where dark {
                path += "M\(x + quietZone) \(y + quietZone)h1v1h-1z"
            }
        }
        return path
    }

    /// An SVG of the code: one path of the dark modules on a white square with a quiet zone of `quietZone` modules
    /// (the standard asks for four), scaled to `pixels` across.
    public func svg(pixels: Int = 232, quietZone: Int = 4) -> String {
        let extent = size + 2 * quietZone
        let path = svgPath(quietZone: quietZone)
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(extent) \(extent)" width="\(pixels)" height="\(pixels)" \
            shape-rendering="crispEdges" role="img" aria-label="QR code"><rect width="\(extent)" height="\(extent)" fill="#fff"/>\
            <path d="\(path)" fill="#000"/></svg>
            """
    }

    /// The code for a terminal, two rows of modules per line with half blocks: light modules are drawn (as a
    /// terminal's light text on its dark background), dark ones left blank, with a quiet zone of `quietZone`.
    public func terminal(quietZone: Int = 2) -> String {
        let extent = size + 2 * quietZone
        func isLight(_ x: Int, _ y: Int) -> Bool {
            let (column, row) = (x - quietZone, y - quietZone)
            guard (0..<size).contains(column), (0..<size).contains(row) else { return true }
            return !modules[row][column]
        }
        var lines: [String] = []
        for y in stride(from: 0, to: extent, by: 2) {
            var line = ""
            for x in 0..<extent {
                switch (isLight(x, y), y + 1 < extent ? isLight(x, y + 1) : false) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}

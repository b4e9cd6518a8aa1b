/// A picture drawn in a true-colour terminal with '▀' half blocks: each character cell shows two
/// pixels, the upper one as foreground colour, the lower as background.
enum TerminalImage {
    /// Colour on stdout (by --color, NO_COLOR and the terminal), and either a terminal that says
    /// it does 24-bit colour (COLORTERM) or `--color always`.
    static func canShow(environment: [String: String], console: Console) -> Bool {
        guard console.useColorOnStdout else { return false }
        if console.colorMode == .always { return true }
        let colorTerm = environment["COLORTERM"]?.lowercased() ?? ""
        return colorTerm == "truecolor" || colorTerm == "24bit"
    }

    static func halfBlocks(jpeg: [UInt8]) throws -> String {
        let (header, rgb) = try JPEGDecoder().decodeRGB(jpeg)
        var text = ""
        for y in stride(from: 0, to: header.height - 1, by: 2) {
            for x in 0..<header.width {
                let top = (y * header.width + x) * 3, bottom = ((y + 1) * header.width + x) * 3
                text += "\u{1B}[38;2;\(rgb[top]);\(rgb[top + 1]);\(rgb[top + 2])m"
                    + "\u{1B}[48;2;\(rgb[bottom]);\(rgb[bottom + 1]);\(rgb[bottom + 2])m▀"
            }
            text += "\u{1B}[0m\n"
        }
        return text
    }
}

/// The little text formatting camroll needs, without Foundation's NSString bridge: that bridge
/// (String(format:), padding, trimming, NSRegularExpression) pulls in ICU, tens of megabytes
/// of binary and tens of milliseconds of start-up under emulation, for a few numbers and paths.
extension String {
    /// The text a C function wrote into `buffer`, up to its terminating NUL (or all of it).
    init(nulTerminated buffer: [CChar]) {
        self.init(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Cut or padded with spaces on the right to exactly `width` characters.
    func padded(to width: Int) -> String {
        count >= width ? String(prefix(width)) : self + String(repeating: " ", count: width - count)
    }

    /// Padded with spaces on the left to at least `width` characters (right-aligned).
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }

    /// Text from outside camroll made safe to print: a path, a URL, a catalog value, what a
    /// device or a photo's EXIF says of itself, an argument echoed in an error. Control
    /// characters (C0, DEL, C1: a terminal's escape sequences, OSC 52 clipboard writes, bells)
    /// and the bidirectional overrides that can make text read other than it is are shown
    /// escaped: `\e` for ESC, `\n` `\r` `\t`, `\x07` for the others below U+00A0 (`\x9b` is
    /// the C1 CSI), `\u202e` for an override. The one sanitiser: the console applies it to
    /// everything it prints but JSON (`Console.out`, `Console.error`), table cells and CSV fields
    /// take it whole (`Table.Value.display`), and text a device gave is stored so.
    var printable: String { escapingControls(keepingLineBreaks: false) }

    /// `printable`, but line breaks (and tabs) kept: for whole blocks of output, whose lines are
    /// camroll's own.
    var printableLines: String { escapingControls(keepingLineBreaks: true) }

    private func escapingControls(keepingLineBreaks: Bool) -> String {
        // Most text has none of them: found in one pass over its bytes, without walking its
        // scalars. 0xC2 starts U+0080…U+00BF (the C1 controls among them), 0xE2 U+2000…U+2FFF.
        let suspect = utf8.contains { byte in
            (byte < 0x20 && !(keepingLineBreaks && (byte == 0x0A || byte == 0x09))) || byte == 0x7F || byte == 0xC2 || byte == 0xE2
        }
        guard suspect else { return self }
        var result = ""
        for scalar in unicodeScalars {
            let value = scalar.value
            if keepingLineBreaks && (value == 0x0A || value == 0x09) {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch value {
            case 0x1B: result += "\\e"
            case 0x0A: result += "\\n"
            case 0x0D: result += "\\r"
            case 0x09: result += "\\t"
            case 0..<0x20, 0x7F...0x9F: result += "\\x" + Format.hexByte(UInt8(value)).lowercased()
            case 0x202A...0x202E, 0x2066...0x2069: result += "\\u" + String(value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Without leading and trailing spaces, tabs and line ends.
    func trimmed() -> String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(self[first...last])
    }
}

/// Paths as strings, the way NSString's path methods treat them.
enum PathText {
    /// `/a/b/c` → `/a/b`; `/a` → `/`; `c` → ``.
    static func directory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }

    /// `/a/b/c.jpg` → `c.jpg`.
    static func lastComponent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return trimmed.lastIndex(of: "/").map { String(trimmed[trimmed.index(after: $0)...]) } ?? String(trimmed)
    }
}

/// Numbers as text: printf's %.Nf, %.Ng, %0Nd and %ND, without printf.
enum Format {
    /// `value` with `digits` decimals, rounded half away from zero (%.1f: 2.25 → "2.3").
    static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : value < 0 ? "-inf" : "inf" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9e18 else { return String(value) }
        let units = Int64(scaled)
        let whole = units / Int64(scale), fraction = units % Int64(scale)
        let sign = value < 0 && units != 0 ? "-" : ""
        guard digits > 0 else { return sign + String(whole) }
        let fractionText = String(fraction)
        return sign + String(whole) + "." + String(repeating: "0", count: digits - fractionText.count) + fractionText
    }

    /// `value` to `digits` significant digits, trailing zeros dropped (%.3g: 29.97 → "30",
    /// 7.5 → "7.5", 0.1 → "0.1").
    static func significant(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite, value != 0 else { return value == 0 ? "0" : String(value) }
        var magnitude = 0
        var probe = abs(value)
        while probe >= 10 { probe /= 10; magnitude += 1 }
        while probe < 1 { probe *= 10; magnitude -= 1 }
        var text = fixed(value, max(0, digits - 1 - magnitude))
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        return text
    }

    /// `value` right-aligned in `width` characters, padded with `pad` (%0Nd, %Nd).
    static func integer(_ value: Int, width: Int, pad: Character = " ") -> String {
        let text = String(value)
        // Digits and a sign are one byte each: the byte count is the width, without the
        // character-by-character count (this names every file a run saves).
        let length = text.utf8.count
        return length >= width ? text : String(repeating: pad, count: width - length) + text
    }

    /// Two upper-case hex digits (%02X).
    static func hexByte(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}

extension Int {
    /// `self + other`, held at Int.max (or .min) instead of trapping: sums of many rows.
    func addingSaturated(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}

import FoundationEssentials
import Glibc

/// The `-o` naming template: literal text with `{seq}`, `{seq:N}`, `{seq/N}`, `{uuid}`, `{run}`,
/// `{frame}`, `{date}`, `{time}`, `{ms}` and strftime's `%Y %m %d %H %M %S %%`.
/// Parsed once; rendered once per save.
public struct OutputTemplate: Sendable, CustomStringConvertible {
    enum Piece: Sendable, Equatable {
        case literal(String)
        case seq(width: Int?)
        /// Which group of `size` saves this one is in, from 1: a directory for every N files
        /// (`{seq/1000}/{seq}.jpg`), since a FAT directory holds at most 65 536 names.
        case seqGroup(size: Int)
        case uuid, run, frame, date, time, milliseconds
        case strftime(Character)
    }

    let pieces: [Piece]
    public let text: String

    /// `-o -`, as a run records it: no file, the photos went to standard output.
    public static let standardOutput = "-"

    /// `PICTURES/camroll/{date}_{time}_{seq}.jpg`, PICTURES as `UserDirectories.pictures` finds it.
    public static func defaultText(environment: [String: String]) throws -> String {
        try UserDirectories.pictures(environment: environment) + "/camroll/{date}_{time}_{seq}.jpg"
    }

    /// The extension of the names, when it is that of another picture format (`.png`, `.webp`…):
    /// camroll writes JPEG whatever the name, so such a name would tell a viewer or a script
    /// something false about the file. Nil for `.jpg`, `.jpeg`, none or anything else.
    public var otherPictureExtension: String? {
        guard case .literal(let last)? = pieces.last, let dot = last.lastIndex(of: "."),
              !last[dot...].contains("/") else { return nil }
        let ext = String(last[last.index(after: dot)...])
        return Self.otherPictureExtensions.contains(ext.lowercased()) ? ext : nil
    }

    static let otherPictureExtensions: Set<String> = [
        "png", "gif", "webp", "bmp", "tif", "tiff", "heic", "heif", "avif", "jxl", "ppm", "pgm", "pnm", "raw", "dng", "svg",
    ]

    public init(_ text: String) throws {
        guard !text.isEmpty else { throw CamrollError.usage("the output template is empty") }
        guard !text.hasSuffix("/") else {
            throw CamrollError.usage("output template '\(text)' names a directory, not a file",
                hint: "Add a file name, e.g. '\(text){seq}.jpg'.")
        }
        // A line break or a terminal's escape in a file name breaks every listing of it (camroll's
        // own `list` and `verify` lines, `ls`, a script reading paths a line at a time).
        guard text.printable == text else {
            throw CamrollError.usage("output template '\(text.printable)' has a control character (shown escaped): photos would have it in their names")
        }
        var pieces: [Piece] = []
        var literal = ""
        var index = text.startIndex
        func flush() {
            if !literal.isEmpty { pieces.append(.literal(literal)) }
            literal = ""
        }
        while index < text.endIndex {
            let character = text[index]
            if character == "{" {
                guard let close = text[index...].firstIndex(of: "}") else {
                    throw CamrollError.usage("output template '\(text)' has a '{' without a closing '}'")
                }
                let name = String(text[text.index(after: index)..<close])
                flush()
                pieces.append(try Self.token(name, in: text))
                index = text.index(after: close)
                continue
            }
            if character == "%" {
                let next = text.index(after: index)
                guard next < text.endIndex, "YmdHMS%".contains(text[next]) else {
                    throw CamrollError.usage(
                        "output template '\(text)' has an unknown '%' code",
                        hint: "Supported: %Y %m %d %H %M %S, and %% for a literal '%'.")
                }
                if text[next] == "%" {
                    literal.append("%")
                } else {
                    flush()
                    pieces.append(.strftime(text[next]))
                }
                index = text.index(after: next)
                continue
            }
            literal.append(character)
            index = text.index(after: index)
        }
        flush()
        self.pieces = pieces
        self.text = text
    }

    private static func token(_ name: String, in text: String) throws -> Piece {
        switch name {
        case "seq": return .seq(width: nil)
        case "uuid": return .uuid
        case "run": return .run
        case "frame": return .frame
        case "date": return .date
        case "time": return .time
        case "ms": return .milliseconds
        default:
            if name.hasPrefix("seq:"), let width = Int(name.dropFirst(4)), (1...18).contains(width) {
                return .seq(width: width)
            }
            if name.hasPrefix("seq/"), let size = Int(name.dropFirst(4)), (2...1_000_000_000).contains(size) {
                return .seqGroup(size: size)
            }
            // The right token with a number out of its range: say which range.
            if name.hasPrefix("seq:"), Int(name.dropFirst(4)) != nil {
                throw CamrollError.usage("output template '\(text)': the width in '{\(name)}' must be from 1 to 18")
            }
            if name.hasPrefix("seq/"), Int(name.dropFirst(4)) != nil {
                throw CamrollError.usage("output template '\(text)': the group size in '{\(name)}' must be from 2 to 1000000000")
            }
            throw CamrollError.usage(
                "output template '\(text)' has an unknown token '{\(name)}'",
                hint: "Tokens: {seq} {seq:N} {seq/N} {uuid} {run} {frame} {date} {time} {ms}.")
        }
    }

    /// The one path a template without tokens renders, every time.
    public var fixedPath: String? {
        if pieces.count == 1, case .literal(let path) = pieces[0] { return path }
        return nil
    }

    /// True when two saves of one run can get different names.
    public var namesEachSave: Bool {
        pieces.contains { if case .seq = $0 { true } else { $0 == .uuid } }
    }

    /// True when the saves of two frames of one run get different names (`{frame}`), though
    /// the copies of one frame may not.
    public var namesEachFrame: Bool { namesEachSave || pieces.contains { $0 == .frame } }

    public var description: String { text }

    /// A regular expression matching every path this template can render for run `run`; the
    /// first capture group is `{seq}` when the template has one. For finding a killed run's
    /// files that were put under their names but not yet recorded.
    /// `text` as a regular expression that matches exactly it.
    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            if "\\^$.|?*+()[]{}".contains(character) { out.append("\\") }
            out.append(character)
        }
        return out
    }

    public func pathPattern(run: Int) -> String {
        var pattern = "^"
        var seqCaptured = false
        // The default naming may have added "-2", "-3"… before the extension (see
        // AtomicFileWriter.ExistingFile.keepAndNumber).
        let numbered = "(?:-\\d+)?"
        for (index, piece) in pieces.enumerated() {
            switch piece {
            case .literal(let text) where index == pieces.count - 1:
                if let dot = text.lastIndex(of: "."), !text[dot...].contains("/") {
                    pattern += Self.escaped(String(text[..<dot])) + numbered + Self.escaped(String(text[dot...]))
                } else {
                    pattern += Self.escaped(text) + numbered
                }
            case .literal(let text): pattern += Self.escaped(text)
            case .seq(let width):
                let digits = width.map { "\\d{\($0),}" } ?? "\\d+"
                pattern += seqCaptured ? digits : "(\(digits))"
                seqCaptured = true
            case .seqGroup: pattern += "\\d+"
            case .uuid: pattern += "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
            case .run: pattern += String(run)
            case .frame: pattern += "\\d+"
            case .date: pattern += "\\d{8}"
            case .time: pattern += "\\d{6}"
            case .milliseconds: pattern += "\\d{3}"
            case .strftime(let code): pattern += code == "Y" ? "\\d{4}" : "\\d{2}"
            }
        }
        if case .literal = pieces.last {} else { pattern += numbered }
        return pattern + "$"
    }

    /// The directory all of this template's files are under: its text up to the last '/' before
    /// the first token.
    public var fixedDirectory: String {
        var prefix = ""
        for piece in pieces {
            guard case .literal(let text) = piece else { break }
            prefix += text
        }
        guard let slash = prefix.lastIndex(of: "/") else { return "/" }
        let directory = String(prefix[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    /// How many directory levels below `fixedDirectory` the files are.
    public var depthBelowFixedDirectory: Int {
        // The slashes of the literal text: `{seq/1000}` has one of its own.
        let slashes = pieces.reduce(0) { count, piece in
            if case .literal(let text) = piece { count + text.filter { $0 == "/" }.count } else { count }
        }
        return slashes - fixedDirectory.filter { $0 == "/" }.count - (fixedDirectory == "/" ? 0 : 1)
    }

    public struct Values {
        public var seq: Int
        public var seqWidth: Int
        public var run: Int
        public var frame: Int
        public var frameWidth: Int
        public var time: Date
    }

    /// The path of one save. Written byte by byte into the string's own storage: this runs for
    /// every file a run saves, and the string interpolation it replaced, with its padded pieces,
    /// cost 0.46 µs a save, a third of camroll's own CPU time beside the system calls of a
    /// 23 KB save (perf, make bench-save).
    public func render(_ values: Values) -> String {
        // A token is at most as wide as its width or 20 characters (an Int's digits and sign), a
        // date three such numbers, a UUID 36.
        let widths = max(0, values.seqWidth) + max(0, values.frameWidth)
        var capacity = 0
        for piece in pieces {
            if case .literal(let text) = piece { capacity += text.utf8.count } else { capacity += 64 + widths }
        }
        var local: tm?
        func localTime() -> tm {
            if let local { return local }
            var seconds = time_t(values.time.timeIntervalSince1970.rounded(.down))
            var parts = tm()
            localtime_r(&seconds, &parts)
            local = parts
            return parts
        }
        return String(unsafeUninitializedCapacity: capacity) { buffer in
            var end = 0
            func put<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
                let copied: Void? = bytes.withContiguousStorageIfAvailable { contiguous in
                    UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[end...]))
                        .copyMemory(from: UnsafeRawBufferPointer(contiguous))
                }
                if copied == nil { for byte in bytes { buffer[end] = byte; end += 1 } } else { end += bytes.count }
            }
            func padded(_ number: Int, _ width: Int) {
                guard number >= 0 else { return put(Format.integer(number, width: width, pad: "0").utf8) }
                var digits = 1, rest = number / 10
                while rest > 0 { digits += 1; rest /= 10 }
                let length = max(width, digits)
                var position = end + length, value = number
                while position > end {
                    position -= 1
                    buffer[position] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                end += length
            }
            for piece in pieces {
                switch piece {
                case .literal(let text): put(text.utf8)
                case .seq(let width): padded(values.seq, width ?? values.seqWidth)
                case .seqGroup(let size):
                    // As wide as the last group of a run whose numbers are seqWidth digits wide.
                    let largestSeq = (0..<min(values.seqWidth, 18)).reduce(1) { value, _ in value * 10 } - 1
                    padded((values.seq - 1) / size + 1, String((max(largestSeq, 1) - 1) / size + 1).utf8.count)
                case .uuid: put(UUID().uuidString.lowercased().utf8)
                case .run: padded(values.run, 1)
                case .frame: padded(values.frame, values.frameWidth)
                case .date:
                    let t = localTime()
                    padded(Int(t.tm_year) + 1900, 4)
                    padded(Int(t.tm_mon) + 1, 2)
                    padded(Int(t.tm_mday), 2)
                case .time:
                    let t = localTime()
                    padded(Int(t.tm_hour), 2)
                    padded(Int(t.tm_min), 2)
                    padded(Int(t.tm_sec), 2)
                case .milliseconds:
                    padded(Timestamp.milliseconds(of: values.time), 3)
                case .strftime(let code):
                    let t = localTime()
                    switch code {
                    case "Y": padded(Int(t.tm_year) + 1900, 4)
                    case "m": padded(Int(t.tm_mon) + 1, 2)
                    case "d": padded(Int(t.tm_mday), 2)
                    case "H": padded(Int(t.tm_hour), 2)
                    case "M": padded(Int(t.tm_min), 2)
                    default: padded(Int(t.tm_sec), 2)
                    }
                }
            }
            return end
        }
    }
}

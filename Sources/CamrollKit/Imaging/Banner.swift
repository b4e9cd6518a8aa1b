import CPango
import FoundationEssentials
import Glibc

/// `--timestamp`, `--title` and how their banner looks, as the user asked it (validated by the
/// parser). The banner is a strip across the whole width of the picture, at its top or bottom:
/// the title at its left, the capture time at its right, as fswebcam draws them.
public struct BannerRequest: Sendable, Equatable {
    public enum Edge: String, Sendable, CaseIterable {
        case top, bottom
    }

    /// fswebcam's default, which its users know.
    public static let defaultTimestampFormat = "%Y-%m-%d %H:%M:%S (%Z)"
    public static let defaultFont = "sans"
    /// fontconfig's generic names: each stands for whatever font the system prefers, so that
    /// the family drawn with never bears that name.
    static let genericFamilies: Set<String> = ["sans", "sans-serif", "serif", "monospace", "mono", "system-ui", "cursive", "fantasy", "emoji"]
    public static let fontSizes = 4...1000

    public var title: String?
    /// strftime's format for the frame's capture time; nil: no timestamp.
    public var timestampFormat: String?
    public var edge = Edge.bottom
    public var font = defaultFont
    /// Pixels; nil: a 30th of the picture's height, at least 10 (16 at 640x480, 36 at 1080p).
    public var fontSize: Int?
    /// fswebcam's colours: a dark blue strip, three quarters opaque, and white text.
    public var background = BannerColor(rgba: 0x263A_93BF)
    public var text = BannerColor(rgba: 0xFFFF_FFFF)
    /// The overlay options given, to say so when there is no banner for them to style.
    var given: Set<String> = []

    public init() {}

    public var isRequested: Bool { title != nil || timestampFormat != nil }

    /// The pixel size of the font on a picture `height` rows high.
    func fontPixels(forHeight height: Int) -> Int { fontSize ?? max(10, height / 30) }

    /// What the banner says on `frame`: the title (start) and the capture time (end), in local
    /// time. The frame's own time, never the moment it is drawn.
    func texts(for frame: Frame) -> (start: String, end: String) {
        (title ?? "", timestampFormat.map { Self.format(frame.capturedAt, $0) } ?? "")
    }

    /// The catalog's `captures.banner`: the texts drawn, title first, one a line.
    func catalogText(for frame: Frame) -> String? {
        guard isRequested else { return nil }
        let (start, end) = texts(for: frame)
        return [start, end].filter { !$0.isEmpty }.joined(separator: "\n")
    }

    /// `date` by strftime's `format`, in the local time zone (TZ).
    static func format(_ date: Date, _ format: String) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 1024)
        let count = strftime(&buffer, buffer.count, format, &parts)
        return count == 0 ? "" : String(nulTerminated: buffer)
    }

    /// A title or a format fit for one line: no control characters (a newline, a terminal's
    /// escape), which the banner could not show and `show` would print escaped.
    static func isOneLine(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }
}

/// A colour as `--banner-color` and `--text-color` take it: `#RRGGBB`, `#RRGGBBAA` (AA the
/// opacity: ff opaque, 00 invisible) or one of a few names.
public struct BannerColor: Sendable, Equatable {
    public var rgba: UInt32

    public init(rgba: UInt32) { self.rgba = rgba }

    static let names: [String: UInt32] = [
        "black": 0x0000_00FF, "white": 0xFFFF_FFFF, "red": 0xFF00_00FF, "green": 0x00FF_00FF, "blue": 0x0000_FFFF,
        "yellow": 0xFFFF_00FF, "grey": 0x8080_80FF, "gray": 0x8080_80FF, "transparent": 0x0000_0000,
    ]

    public init?(parsing text: String) {
        let lowered = text.lowercased()
        if let named = Self.names[lowered] {
            rgba = named
            return
        }
        let digits = lowered.hasPrefix("#") ? lowered.dropFirst() : Substring(lowered)
        guard digits.count == 6 || digits.count == 8, digits.allSatisfy(\.isHexDigit),
              let value = UInt32(digits, radix: 16) else { return nil }
        rgba = digits.count == 6 ? value << 8 | 0xFF : value
    }
}

/// Draws the banner into frames before they are encoded, with Pango and cairo (Sources/CPango,
/// loaded here, on first use). Only the banner's rows are touched, in the frame's own format:
/// a YUYV or YUV 4:2:0 frame is not converted to RGB at all, its strip is blended with the
/// banner cairo drew. The layout and the drawn banner are kept between frames and made again
/// only when the text changes (once a second for a timestamp in seconds).
public final class BannerPainter {
    public let request: BannerRequest
    /// The family fontconfig gave for `--font`.
    public let resolvedFamily: String
    private var handle: OpaquePointer?
    private var handlePixels = 0

    /// Loads Pango (exit 69 without it, naming the Debian package) and checks the font: a
    /// family fontconfig does not have is a usage error naming the one it would use instead,
    /// since fontconfig itself never refuses a name, it substitutes.
    public init(_ request: BannerRequest) throws {
        self.request = request
        var why = [CChar](repeating: 0, count: 512)
        guard cpango_load(&why, why.count) == 1 else {
            throw CamrollError(
                .unavailable,
                "cannot draw the --timestamp/--title banner without Pango (Debian package libpangocairo-1.0-0): \(String(nulTerminated: why))",
                hint: "Install it: sudo apt install libpangocairo-1.0-0; or leave out --timestamp and --title.")
        }
        var resolved = [CChar](repeating: 0, count: 256)
        guard let handle = cpango_banner_new(request.font, 16, &resolved, resolved.count, &why, why.count) else {
            throw CamrollError(.unavailable, "cannot draw the banner: \(String(nulTerminated: why))")
        }
        self.handle = handle
        handlePixels = 16
        resolvedFamily = String(nulTerminated: resolved)
        if !Self.matches(asked: request.font, resolved: resolvedFamily) {
            cpango_banner_free(handle)
            self.handle = nil
            throw CamrollError.usage(
                "no font family '\(request.font)' is installed (fontconfig would draw with '\(resolvedFamily)' instead)",
                hint: "List the families with: fc-list : family; or give --font sans, serif or monospace.")
        }
    }

    deinit { cpango_banner_free(handle) }

    /// Whether the family fontconfig gave is the one asked for: the same name but for case, a
    /// style or width after it ("DejaVu Sans Condensed" is DejaVu Sans's), or a generic name.
    static func matches(asked: String, resolved: String) -> Bool {
        let asked = asked.lowercased().trimmed(), resolved = resolved.lowercased()
        if BannerRequest.genericFamilies.contains(asked) { return !resolved.isEmpty }
        return !resolved.isEmpty && (asked == resolved || asked.hasPrefix(resolved + " "))
    }

    /// Laid out for `frame`: the font at its size for the frame's height, the texts for its
    /// time. Returns the handle and the rows the banner takes.
    private func prepared(for frame: Frame, height: Int) throws -> (OpaquePointer, Int) {
        let pixels = request.fontPixels(forHeight: height)
        if handle == nil || pixels != handlePixels {
            cpango_banner_free(handle)
            handle = nil
            var why = [CChar](repeating: 0, count: 512)
            guard let made = cpango_banner_new(request.font, Double(pixels), nil, 0, &why, why.count) else {
                throw CamrollError(.unavailable, "cannot draw the banner: \(String(nulTerminated: why))")
            }
            handle = made
            handlePixels = pixels
        }
        guard let handle else { throw CamrollError(.failure, "internal error: no banner layout") }
        cpango_banner_set_colors(handle, request.background.rgba, request.text.rgba)
        let (start, end) = request.texts(for: frame)
        cpango_banner_set_text(handle, start, end)
        return (handle, Int(cpango_banner_height(handle)))
    }

    /// Characters of the last texts laid out that no installed font has (drawn as boxes).
    public var unknownGlyphs: Int { handle.map { Int(cpango_banner_unknown_glyphs($0)) } ?? 0 }

    /// The banner's place in `area` of a `width` x `height` picture, `rows` high at most: its
    /// top or bottom rows, starting on an even row and column and an even number of columns
    /// wide (YUYV's pairs, YUV 4:2:0's chroma).
    private func strip(rows wanted: Int, in area: PixelRect, width: Int, height: Int) -> PixelRect {
        let x = max(0, min(area.x, width - 1)) & ~1
        let columns = max(0, min(area.width, width - x)) & ~1
        let top = max(0, min(area.y, height - 1)), bottom = max(top, min(area.y + area.height, height))
        let rows = min(wanted, bottom - top)
        let first = request.edge == .top ? (top + 1) & ~1 : max(0, (bottom - rows) & ~1)
        return PixelRect(x: x, y: first, width: columns, height: max(0, min(first + rows, bottom) - first))
    }

    /// Draws the banner into `frame` (YUYV, YUV 4:2:0 or packed RGB), across the whole of it or
    /// of `region` (a crop's rectangle).
    public func draw(on frame: inout Frame, within region: PixelRect? = nil) throws {
        let area = region ?? PixelRect(x: 0, y: 0, width: frame.width, height: frame.height)
        let (handle, wanted) = try prepared(for: frame, height: area.height)
        guard wanted > 0 else { return }
        let place = strip(rows: wanted, in: area, width: frame.width, height: frame.height)
        let first = place.y, rows = place.height, left = place.x, columns = place.width
        guard rows > 0, columns > 0 else { return }
        let width = frame.width, height = frame.height
        var drawn: Int32 = 0
        switch frame.format {
        case .yuyv:
            let stride = frame.bytesPerLine
            guard width % 2 == 0, stride >= width * 2, frame.bytes.count >= stride * (height - 1) + width * 2 else {
                throw CamrollError(.dataError, "a \(width)x\(height) YUYV frame of \(frame.bytes.count) bytes: cannot draw a banner on it")
            }
            let fullRange: Int32 = frame.fullRange ? 1 : 0
            drawn = frame.bytes.withUnsafeMutableBufferPointer { bytes in
                cpango_draw_on_yuyv(handle, bytes.baseAddress! + first * stride + left * 2, Int32(columns), Int32(rows), Int32(stride), fullRange)
            }
        case .yuv420:
            let chromaWidth = (width + 1) / 2, chromaSize = chromaWidth * ((height + 1) / 2)
            guard frame.bytes.count >= width * height + 2 * chromaSize else {
                throw CamrollError(.dataError, "a \(width)x\(height) YUV 4:2:0 frame of \(frame.bytes.count) bytes: cannot draw a banner on it")
            }
            let fullRange: Int32 = frame.fullRange ? 1 : 0
            drawn = frame.bytes.withUnsafeMutableBufferPointer { bytes in
                let base = bytes.baseAddress!
                let chromaOffset = first / 2 * chromaWidth + left / 2
                return cpango_draw_on_yu12(
                    handle, base + first * width + left, Int32(width), base + width * height + chromaOffset,
                    base + width * height + chromaSize + chromaOffset, Int32(chromaWidth), Int32(columns), Int32(rows), fullRange)
            }
        case .rgb24:
            let stride = frame.bytesPerLine > 0 ? frame.bytesPerLine : width * 3
            guard stride >= width * 3, frame.bytes.count >= stride * (height - 1) + width * 3 else {
                throw CamrollError(.dataError, "a \(width)x\(height) RGB frame of \(frame.bytes.count) bytes: cannot draw a banner on it")
            }
            drawn = frame.bytes.withUnsafeMutableBufferPointer { bytes in
                cpango_draw_on_rgb24(handle, bytes.baseAddress! + first * stride + left * 3, Int32(columns), Int32(rows), Int32(stride))
            }
        default:
            throw CamrollError(.dataError, "cannot draw a banner on \(frame.format.code) frames")
        }
        guard drawn == 1 else { throw CamrollError(.failure, "cairo could not make the banner's \(columns)x\(rows) surface") }
    }

    /// Draws the banner into decoded pixels (a JPEG or PNG source, PNG output), taking its
    /// text from `frame` (whose capture time it shows).
    public func draw(on image: inout RGBImage, of frame: Frame) throws {
        var pixels = Frame(
            format: .rgb24, width: image.width, height: image.height, bytesPerLine: image.width * 3, bytes: [],
            sequence: frame.sequence, capturedAt: frame.capturedAt, isShotTime: frame.isShotTime)
        swap(&pixels.bytes, &image.pixels)
        defer { swap(&pixels.bytes, &image.pixels) }
        try draw(on: &pixels)
    }
}

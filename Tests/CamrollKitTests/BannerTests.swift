@testable import CamrollKit
import Foundation
import Testing

/// `--timestamp` and `--title`: the banner's pixels are in the photo and nothing else moved,
/// every script is shaped with a font that has it, only the banner's rows of a raw frame are
/// touched, the catalog holds the text, and bad input is refused with its code.
@Suite(.serialized) struct BannerTests {
    /// A black banner with white text, so that its ink is easy to tell from the pattern's bars
    /// (75% bars: no sample above 191, so nothing near white but the frame number's box).
    static let blackAndWhite = ["--banner-color", "black", "--text-color", "white"]

    static func decoded(_ path: String) throws -> RGBImage {
        let (header, rgb) = try JPEGDecoder().decodeRGB(try fileBytes(path))
        return RGBImage(width: header.width, height: header.height, pixels: rgb)
    }

    static func luma(_ image: RGBImage, _ x: Int, _ y: Int) -> Int {
        let index = (y * image.width + x) * 3
        return (299 * Int(image.pixels[index]) + 587 * Int(image.pixels[index + 1]) + 114 * Int(image.pixels[index + 2])) / 1000
    }

    /// Pixels of `image` in `rows` × `columns` that are near white and near black.
    static func ink(_ image: RGBImage, rows: Range<Int>, columns: Range<Int>) -> (white: Int, black: Int) {
        var white = 0, black = 0
        for y in rows {
            for x in columns {
                let value = luma(image, x, y)
                if value > 215 { white += 1 }
                if value < 40 { black += 1 }
            }
        }
        return (white, black)
    }

    /// Mean absolute difference of two pictures' samples over `rows`.
    static func meanDifference(_ a: RGBImage, _ b: RGBImage, rows: Range<Int>) -> Double {
        var total = 0
        for index in (rows.lowerBound * a.width * 3)..<(rows.upperBound * a.width * 3) {
            total += abs(Int(a.pixels[index]) - Int(b.pixels[index]))
        }
        return Double(total) / Double(rows.count * a.width * 3)
    }

    @Test func theBannerIsInTheSavedPhotoAndTheRestOfTheFrameIsUnchanged() throws {
        let dir = try TemporaryDirectory()
        let common = ["-d", "pattern", "-r", "640x480", "--db", dir.file("c.db"), "--quiet"]
        let plain = try CamrollBinary.run(common + ["-o", dir.file("plain.jpg")])
        let overlaid = try CamrollBinary.run(
            common + ["-o", dir.file("banner.jpg"), "--timestamp", "--title", "Front door"] + Self.blackAndWhite)
        #expect(plain.status == 0 && overlaid.status == 0, "\(plain.stderr) \(overlaid.stderr)")
        let without = try Self.decoded(dir.file("plain.jpg")), with = try Self.decoded(dir.file("banner.jpg"))
        #expect(with.width == 640 && with.height == 480)
        // A 16-pixel font (a 30th of 480) and its margins: the banner is under 48 rows. Above
        // it (and a block row of JPEG noise beyond) the two photos are the same picture.
        #expect(Self.meanDifference(without, with, rows: 0..<(480 - 48)) < 1.0)
        // In it, right half (the timestamp's, away from the pattern's frame number): white
        // text on black, where the plain photo has bars and no white.
        let strip = (480 - 20)..<480, right = 320..<640
        let banner = Self.ink(with, rows: strip, columns: right), bars = Self.ink(without, rows: strip, columns: right)
        #expect(banner.white > 100 && banner.black > 2000, "\(banner)")
        #expect(bars.white == 0, "\(bars)")
        // The title's half too, left of it.
        #expect(Self.ink(with, rows: strip, columns: 0..<120).white > 50)
        // At the top instead, the bottom left as it was.
        let top = try CamrollBinary.run(common + ["-o", dir.file("top.jpg"), "--title", "Front door", "--banner", "top"] + Self.blackAndWhite)
        #expect(top.status == 0, "\(top.stderr)")
        let atTop = try Self.decoded(dir.file("top.jpg"))
        #expect(Self.meanDifference(without, atTop, rows: 48..<480) < 1.0)
        #expect(Self.ink(atTop, rows: 4..<20, columns: 0..<120).white > 50)
    }

    /// A YUYV frame through the pipeline: only the banner's rows of the frame change (the rest
    /// byte for byte), and the JPEG shows it.
    @Test func aYUYVFrameGetsItsBannerInItsOwnRowsOnly() throws {
        let width = 320, height = 240
        // Mid grey, limited range: Y 126, Cb Cr 128.
        let grey = [UInt8]((0..<(width * height / 2)).flatMap { _ in [126, 128, 126, 128] as [UInt8] })
        let frame = Frame(format: .yuyv, width: width, height: height, bytesPerLine: width * 2, bytes: grey, sequence: 1, capturedAt: Date())
        var request = BannerRequest()
        request.title = "YUYV"
        request.timestampFormat = BannerRequest.defaultTimestampFormat
        request.edge = .top
        request.background = BannerColor(rgba: 0x0000_00FF)
        let painter = try BannerPainter(request)
        var drawn = frame
        try painter.draw(on: &drawn)
        let changedRows = (0..<height).filter { row in
            drawn.bytes[(row * width * 2)..<((row + 1) * width * 2)] != frame.bytes[(row * width * 2)..<((row + 1) * width * 2)]
        }
        #expect(changedRows.first == 0 && changedRows.count >= 10 && changedRows.count < 30, "\(changedRows)")
        #expect(changedRows == Array(0..<changedRows.count), "the banner's rows are one strip at the top")

        let pipeline = try ImagePipeline(quality: 90)
        pipeline.banner = painter
        let image = try pipeline.picture(from: frame)
        let (header, rgb) = try JPEGDecoder().decodeRGB(image.bytes)
        let decoded = RGBImage(width: header.width, height: header.height, pixels: rgb)
        let ink = Self.ink(decoded, rows: 0..<changedRows.count, columns: 0..<width)
        #expect(ink.white > 50 && ink.black > 1000, "\(ink)")
        // Below it, the grey as it was.
        let below = (changedRows.count + 8)..<height
        let greys = below.flatMap { y in (0..<width).map { Self.luma(decoded, $0, y) } }
        #expect(greys.allSatisfy { abs($0 - greys[0]) <= 2 }, "grey below the banner")
        #expect(pipeline.bannerText(for: frame)?.hasPrefix("YUYV\n") == true)
    }

    /// A YUV 4:2:0 frame likewise: the planes outside the banner's rows untouched.
    @Test func aYUV420FrameGetsItsBannerInItsOwnRowsOnly() throws {
        let width = 320, height = 240, chroma = (width / 2) * (height / 2)
        let bytes = [UInt8](repeating: 126, count: width * height) + [UInt8](repeating: 128, count: 2 * chroma)
        var frame = Frame(format: .yuv420, width: width, height: height, bytesPerLine: width, bytes: bytes, sequence: 1, capturedAt: Date())
        var request = BannerRequest()
        request.title = "YU12"
        request.background = BannerColor(rgba: 0xC000_00FF)  // red: chroma, where black and white have none
        try BannerPainter(request).draw(on: &frame)
        let changedLuma = (0..<height).filter { row in frame.bytes[(row * width)..<((row + 1) * width)] != bytes[(row * width)..<((row + 1) * width)] }
        #expect(changedLuma.last == height - 1 && changedLuma.count >= 10 && changedLuma.count < 30, "\(changedLuma)")
        #expect(changedLuma.first.map { $0 % 2 == 0 } == true, "starts on a chroma row")
        let firstChromaRow = (changedLuma.first ?? 0) / 2
        #expect(frame.bytes[(width * height)..<(width * height + firstChromaRow * width / 2)].allSatisfy { $0 == 128 })
        #expect(frame.bytes[(width * height + firstChromaRow * width / 2)..<(width * height + chroma)].contains { $0 != 128 })
    }

    /// Right-to-left scripts and CJK (and an emoji) are shaped with fonts that have them:
    /// no box for a missing glyph, and ink in the banner. A character no font has is counted,
    /// so the check can fail.
    @Test(arguments: ["مرحبا بالعالم", "שלום עולם", "你好，世界", "日本語のテキスト", "Front door 🎉"])
    func everyScriptIsDrawnWithAFontThatHasIt(title: String) throws {
        var request = BannerRequest()
        request.title = title
        request.fontSize = 24
        request.background = BannerColor(rgba: 0x0000_00FF)
        let painter = try BannerPainter(request)
        let frame = Frame(format: .rgb24, width: 320, height: 240, bytesPerLine: 960, bytes: [UInt8](repeating: 128, count: 320 * 240 * 3),
                          sequence: 1, capturedAt: Date())
        var image = RGBImage(width: 320, height: 240, pixels: frame.bytes)
        try painter.draw(on: &image, of: frame)
        #expect(painter.unknownGlyphs == 0, "\(title): \(painter.unknownGlyphs) characters without a font")
        let ink = Self.ink(image, rows: 210..<240, columns: 0..<320)
        #expect(ink.white > 30 && ink.black > 1000, "\(title): \(ink)")
    }

    @Test func aCharacterNoFontHasIsCounted() throws {
        var request = BannerRequest()
        request.title = "\u{E000}\u{E001}"  // private use: no font has these
        let painter = try BannerPainter(request)
        var frame = Frame(format: .rgb24, width: 64, height: 48, bytesPerLine: 192, bytes: [UInt8](repeating: 0, count: 64 * 48 * 3),
                          sequence: 1, capturedAt: Date())
        try painter.draw(on: &frame)
        #expect(painter.unknownGlyphs == 2)
    }

    /// The timestamp is the frame's capture time (`%s`: seconds since the epoch, whatever TZ).
    @Test func theTimestampIsTheFramesCaptureTime() throws {
        var request = BannerRequest()
        request.timestampFormat = "%s"
        request.title = "door"
        let frame = Frame(format: .yuyv, width: 2, height: 2, bytesPerLine: 4, bytes: [], sequence: 1,
                          capturedAt: Date(timeIntervalSince1970: 981_173_106.75))
        #expect(request.texts(for: frame) == ("door", "981173106"))
        #expect(request.catalogText(for: frame) == "door\n981173106")
    }

    /// `--timestamp` alone, with a format after it or after `=`, and before another option.
    @Test func theTimestampsFormatMayBeLeftOut() throws {
        #expect(try SnapOptions.parse(["--timestamp"]).banner.timestampFormat == BannerRequest.defaultTimestampFormat)
        #expect(try SnapOptions.parse(["--timestamp", "%H:%M"]).banner.timestampFormat == "%H:%M")
        #expect(try SnapOptions.parse(["--timestamp=at %H"]).banner.timestampFormat == "at %H")
        let before = try SnapOptions.parse(["--timestamp", "-o", "x.jpg"])
        #expect(before.banner.timestampFormat == BannerRequest.defaultTimestampFormat && before.output == "x.jpg")
        let colours = try SnapOptions.parse(["--title", "t", "--banner-colour", "#11223344", "--text-color", "#abcdef", "--banner", "TOP"])
        #expect(colours.banner.background.rgba == 0x1122_3344 && colours.banner.text.rgba == 0xABCD_EFFF && colours.banner.edge == .top)
        #expect(try SnapOptions.parse(["--title", "t", "--font-size", "24"]).banner.fontSize == 24)
        #expect(try SnapOptions.parse(["-d", "pattern"]).banner.isRequested == false)
    }

    /// The catalog's `captures.banner` holds the texts drawn (NULL without a banner), and
    /// `show` prints them escaped as every catalog value is.
    @Test func theCatalogHoldsTheBannersTextAndShowPrintsItEscaped() throws {
        let dir = try TemporaryDirectory()
        let db = dir.file("c.db")
        let title = "Front door \u{202E}gpj.exe"
        let made = try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "-o", dir.file("a.jpg"), "--db", db, "--quiet",
                                          "--title", title, "--timestamp", "%s"])
        #expect(made.status == 0, "\(made.stderr)")
        let plain = try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "-o", dir.file("b.jpg"), "--db", db, "--quiet"])
        #expect(plain.status == 0)
        let catalog = try CatalogReader(db)
        let rows = try catalog.rows("SELECT banner, captured_at FROM captures ORDER BY id", columns: 2)
        let capturedAt = try #require(rows.first?[1].flatMap { Timestamp.seconds(ofISO8601: $0) }.map { Date(timeIntervalSince1970: $0) })
        #expect(rows.first?[0] == "\(title)\n\(Int(capturedAt.timeIntervalSince1970))", "\(rows)")
        #expect(rows.count == 2 && rows[1][0] == nil)
        #expect(try catalog.int("PRAGMA user_version") == Catalog.schemaVersion)
        let shown = try CamrollBinary.run(["show", "1", "--db", db, "--preview-mode", "none"])
        #expect(shown.status == 0)
        #expect(shown.stdout.contains("banner of 1: Front door \\u202egpj.exe · \(Int(capturedAt.timeIntervalSince1970))\n"), "\(shown.stdout)")
        #expect(!shown.stdout.contains("\u{202E}"))
    }

    /// Each bad value: one error line (and its hint), exit 64, nothing saved.
    @Test(arguments: [
        (["--title", "x", "--banner", "left"], "invalid value 'left' for '--banner': expected top or bottom"),
        (["--title", "x", "--font-size", "0"], "invalid value '0' for '--font-size': must be from 4 to 1000"),
        (["--title", "x", "--banner-color", "#12345"], "invalid colour '#12345' for '--banner-color'"),
        (["--title", "x", "--text-colour", "blu"], "invalid colour 'blu' for '--text-colour'"),
        (["--title", "x", "--font", "No Such Family"], "no font family 'No Such Family' is installed (fontconfig would draw with '"),
        (["--title", "two\nlines"], "'--title' holds a control character"),
        (["--font-size", "20"], "'--font-size' styles the banner, and there is none"),
        (["--title="], "'--title' needs a text"),
    ])
    func aBadBannerValueIsAUsageError(arguments: [String], message: String) throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-o", dir.file("a.jpg"), "--db", dir.file("c.db")] + arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stderr.hasPrefix("camroll: error: " + message), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count <= 2)
        #expect(!FileManager.default.fileExists(atPath: dir.file("a.jpg")))
    }

    /// A title that is not UTF-8 (argv's bytes, not Swift's repaired string): named, exit 64.
    @Test func aTitleThatIsNotUTF8IsRefused() throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.runProgram(
            ["/bin/bash", "-c", "exec \"$0\" -d pattern -r 64x48 -o \"$1/a.jpg\" --db \"$1/c.db\" --title \"door $(printf '\\377')\"",
             CamrollBinary.path, dir.path])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("camroll: error: the value of '--title' (argument 10) is not UTF-8: 'door \\xFF'\n"), "\(result.stderr)")
    }

    /// Without Pango (its file hidden in a mount namespace): one line naming the Debian
    /// package, exit 69, before the camera (here the pattern) is opened; a plain photo still
    /// saves. Root only (a mount namespace); CI runs as root.
    @Test func withoutPangoABannerIsUnavailableAndAPlainPhotoIsNot() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return }
        let dir = try TemporaryDirectory()
        let library = URL(fileURLWithPath: "/usr/lib/x86_64-linux-gnu/libpangocairo-1.0.so.0").resolvingSymlinksInPath().path
        guard FileManager.default.fileExists(atPath: library) else { return }
        #expect(FileManager.default.createFile(atPath: dir.file("empty.so"), contents: Data()))
        let script = """
            mount --bind '\(dir.file("empty.so"))' '\(library)' || exit 99
            '\(CamrollBinary.path)' -d pattern -r 64x48 -o '\(dir.file("plain.jpg"))' --db '\(dir.file("c.db"))' --quiet || exit 98
            exec '\(CamrollBinary.path)' -d pattern -r 64x48 -o '\(dir.file("a.jpg"))' --db '\(dir.file("c.db"))' --timestamp
            """
        let result = try CamrollBinary.runProgram(["/usr/bin/unshare", "--mount", "sh", "-c", script])
        #expect(result.status == 69, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.first?.hasPrefix("camroll: error: cannot draw the --timestamp/--title banner without Pango (Debian package libpangocairo-1.0-0)") == true,
                "\(result.stderr)")
        #expect(lines.count == 2)
        #expect(FileManager.default.fileExists(atPath: dir.file("plain.jpg")) && !FileManager.default.fileExists(atPath: dir.file("a.jpg")))
    }
}

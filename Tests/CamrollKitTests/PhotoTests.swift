@testable import CamrollKit
import Foundation
import Testing

/// Photos that carry their story: EXIF read back by exiftool (an independent reader), resize
/// and crop of photo files, Orientation, PNG input.
@Suite struct PhotoTests {
    /// exiftool's answer for `tags` of `path`, as a dictionary (`-json -n`: numbers, not words).
    static func exif(_ path: String, _ tags: [String]) throws -> [String: Any] {
        let result = try CamrollBinary.runProgram(["/usr/bin/exiftool", "-json", "-n"] + tags.map { "-" + $0 } + [path])
        #expect(result.status == 0, "exiftool: \(result.stderr)")
        let parsed = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
        return try #require(parsed?.first)
    }

    /// djpeg (libjpeg-turbo's own tool) decodes it; returns the size it states.
    static func djpegSize(_ path: String) throws -> String {
        let result = try CamrollBinary.runProgram(["/bin/sh", "-c", "djpeg -pnm '\(path)' | head -c 20 | sed -n 2p"])
        #expect(result.status == 0, "djpeg: \(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A 6000x4000 photo as a phone stores a portrait shot: landscape pixels, Orientation 6
    /// (turn 90° clockwise to view), a camera's Make and Model. Written by exiftool.
    static func portraitPhoto(in dir: TemporaryDirectory) throws -> String {
        let path = dir.file("big.jpg")
        let made = try CamrollBinary.run(["-d", "pattern", "-r", "6000x4000", "-o", path, "--db", dir.file("make.db"), "--no-exif"])
        #expect(made.status == 0, "\(made.stderr)")
        let tagged = try CamrollBinary.runProgram(
            ["/usr/bin/exiftool", "-q", "-overwrite_original", "-Orientation#=6", "-Make=Canon", "-Model=EOS 5D", path])
        #expect(tagged.status == 0, "\(tagged.stderr)")
        return path
    }

    @Test func aPatternJPEGCarriesTimeCameraSoftwareAndSize() throws {
        let dir = try TemporaryDirectory()
        let before = Date()
        let result = try CamrollBinary.run(["-d", "pattern", "-r", "640x480", "-o", dir.file("p.jpg"), "--db", dir.file("c.db")])
        #expect(result.status == 0, "\(result.stderr)")
        let tags = try Self.exif(dir.file("p.jpg"), [
            "DateTimeOriginal", "SubSecTimeOriginal", "OffsetTimeOriginal", "Make", "Model", "Software",
            "ExifImageWidth", "ExifImageHeight"])
        #expect(tags["Model"] as? String == "test pattern")
        #expect(tags["Make"] as? String == "camroll")
        #expect((tags["Software"] as? String)?.hasPrefix("camroll 0.") == true)
        #expect(tags["ExifImageWidth"] as? Int == 640 && tags["ExifImageHeight"] as? Int == 480)
        #expect(tags["OffsetTimeOriginal"] != nil && tags["SubSecTimeOriginal"] != nil)
        // The local time written is the time of the shot (within the run's few seconds).
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy:MM:dd HH:mm:ss"
        let taken = try #require(formatter.date(from: tags["DateTimeOriginal"] as? String ?? ""))
        #expect(abs(taken.timeIntervalSince(before)) < 30, "DateTimeOriginal \(taken) vs \(before)")
        #expect(try Self.djpegSize(dir.file("p.jpg")) == "640 480")
    }

    @Test func noExifLeavesTheBlockOut() throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-o", dir.file("p.jpg"), "--db", dir.file("c.db"), "--no-exif"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(JPEGSegments.exifPayload(of: try fileBytes(dir.file("p.jpg"))) == nil)
        #expect(try Self.exif(dir.file("p.jpg"), ["Model"])["Model"] == nil)
    }

    /// An MJPEG frame gets the block after its APP0; the rest is the frame as it came.
    @Test func anInsertedBlockLeavesTheImageDataByteForByte() throws {
        let dir = try TemporaryDirectory()
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "-o", dir.file("frame.jpg"), "--db", dir.file("c.db"), "--no-exif"]).status == 0)
        let frame = try fileBytes(dir.file("frame.jpg"))
        let pipeline = try ImagePipeline(quality: 90, origin: PhotoOrigin(make: "Logitech", model: "C920"))
        let out = try pipeline.jpeg(from: Frame(format: .mjpeg, width: 320, height: 240, bytesPerLine: 0, bytes: frame,
                                               sequence: 1, capturedAt: Date())).bytes
        // After the frame's JFIF APP0, which JFIF wants first.
        let segments = JPEGSegments.headerSegments(of: out)
        #expect(segments.count >= 2 && segments[0].marker == 0xE0)
        let segment = try #require(segments.dropFirst().first)
        #expect(segment.marker == 0xE1 && segment.range.lowerBound == segments[0].range.upperBound)
        #expect(Array(out[..<segment.range.lowerBound]) + Array(out[segment.range.upperBound...]) == frame)
        try Data(out).write(to: URL(fileURLWithPath: dir.file("out.jpg")))
        let tags = try Self.exif(dir.file("out.jpg"), ["Make", "Model", "ExifImageWidth"])
        #expect(tags["Make"] as? String == "Logitech" && tags["Model"] as? String == "C920" && tags["ExifImageWidth"] as? Int == 320)
    }

    @Test func aFileIsScaledIntoTheBoxUprightWithItsExifKept() throws {
        let dir = try TemporaryDirectory()
        let photo = try Self.portraitPhoto(in: dir)
        let result = try CamrollBinary.run(["-d", "file:" + photo, "-r", "800x800", "-o", dir.file("r.jpg"), "--db", dir.file("c.db")])
        #expect(result.status == 0, "\(result.stderr)")
        // Shown as 4000x6000 (portrait), fitted into 800x800: 533x800, pixels now upright.
        #expect(try Self.djpegSize(dir.file("r.jpg")) == "533 800")
        let tags = try Self.exif(dir.file("r.jpg"), ["Orientation", "Make", "Model", "ExifImageWidth", "ExifImageHeight", "Software"])
        #expect(tags["Orientation"] as? Int == 1)
        #expect(tags["Make"] as? String == "Canon" && tags["Model"] as? String == "EOS 5D")
        #expect(tags["ExifImageWidth"] as? Int == 533 && tags["ExifImageHeight"] as? Int == 800)
        let db = try CatalogReader(dir.file("c.db"))
        #expect(try db.int("SELECT width * 10000 + height FROM captures") == 533 * 10000 + 800)
        #expect(try db.int("SELECT jpeg_quality FROM captures") == 90)
    }

    /// A passport photo's shape, from the portrait file: centred crop, exact size.
    @Test func anAspectCropWithAResizeGivesTheExactSize() throws {
        let dir = try TemporaryDirectory()
        let photo = try Self.portraitPhoto(in: dir)
        let result = try CamrollBinary.run(["-d", "file:" + photo, "--crop", "413:626", "-r", "413x626", "-o", dir.file("pp.jpg"), "--db", dir.file("c.db")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Self.djpegSize(dir.file("pp.jpg")) == "413 626")
        #expect(try Self.exif(dir.file("pp.jpg"), ["Orientation"])["Orientation"] as? Int == 1)
    }

    /// A crop alone is lossless: the pixels are the file's own (decoded, they equal the same
    /// region of the original), the Orientation stays with the stored pixels.
    @Test func aCropAloneIsLossless() throws {
        let dir = try TemporaryDirectory()
        let source = dir.file("s.jpg")
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "640x480", "-o", source, "--db", dir.file("c.db")]).status == 0)
        let result = try CamrollBinary.run(["-d", "file:" + source, "--crop", "320x240+64+32", "-o", dir.file("c.jpg"), "--db", dir.file("c.db")])
        #expect(result.status == 0, "\(result.stderr)")
        let (fullHeader, full) = try JPEGDecoder().decodeRGB(try fileBytes(source))
        let (cropHeader, crop) = try JPEGDecoder().decodeRGB(try fileBytes(dir.file("c.jpg")))
        #expect(cropHeader.width == 320 && cropHeader.height == 240)
        var differing = 0
        for y in 0..<240 {
            for x in 0..<(320 * 3) where crop[y * 320 * 3 + x] != full[((y + 32) * fullHeader.width + 64) * 3 + x] {
                differing += 1
            }
        }
        #expect(differing == 0, "\(differing) samples differ from the original's region")
        let db = try CatalogReader(dir.file("c.db"))
        #expect(try db.rows("SELECT jpeg_quality FROM captures ORDER BY id DESC LIMIT 1", columns: 1) == [[nil]])

        let photo = try Self.portraitPhoto(in: dir)
        #expect(try CamrollBinary.run(["-d", "file:" + photo, "--crop", "1:1", "-o", dir.file("sq.jpg"), "--db", dir.file("c.db")]).status == 0)
        #expect(try Self.djpegSize(dir.file("sq.jpg")) == "4000 4000")
        let tags = try Self.exif(dir.file("sq.jpg"), ["Orientation", "Model", "ExifImageWidth"])
        #expect(tags["Orientation"] as? Int == 6 && tags["Model"] as? String == "EOS 5D" && tags["ExifImageWidth"] as? Int == 4000)
    }

    @Test func maxBytesOnABigFileHintsAtResizeAndThatWorks() throws {
        let dir = try TemporaryDirectory()
        let photo = try Self.portraitPhoto(in: dir)
        let refused = try CamrollBinary.run(["-d", "file:" + photo, "--max-bytes", "20K", "-o", dir.file("m.jpg"), "--db", dir.file("c.db")])
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("with -r (e.g. -r "), "\(refused.stderr)")
        let fitted = try CamrollBinary.run(["-d", "file:" + photo, "-r", "640x640", "--max-bytes", "20K", "-o", dir.file("m.jpg"), "--db", dir.file("c.db")])
        #expect(fitted.status == 0, "\(fitted.stderr)")
        #expect(try fileBytes(dir.file("m.jpg")).count <= 20 * 1024)
        #expect(try Self.djpegSize(dir.file("m.jpg")) == "427 640")
        let tags = try Self.exif(dir.file("m.jpg"), ["Orientation", "Model"])
        #expect(tags["Orientation"] as? Int == 1 && tags["Model"] as? String == "EOS 5D")
    }

    @Test func qualityReencodesAFileAndFormatIsRefused() throws {
        let dir = try TemporaryDirectory()
        let source = dir.file("s.jpg")
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "640x480", "-q", "95", "-o", source, "--db", dir.file("c.db")]).status == 0)
        let copied = try CamrollBinary.run(["-d", "file:" + source, "-o", dir.file("same.jpg"), "--db", dir.file("c.db")])
        #expect(copied.status == 0)
        #expect(try fileBytes(dir.file("same.jpg")) == fileBytes(source))
        let lower = try CamrollBinary.run(["-d", "file:" + source, "-q", "30", "-o", dir.file("q.jpg"), "--db", dir.file("c.db")])
        #expect(lower.status == 0, "\(lower.stderr)")
        #expect(try fileBytes(dir.file("q.jpg")).count < fileBytes(source).count)
        #expect(try CatalogReader(dir.file("c.db")).int("SELECT jpeg_quality FROM captures ORDER BY id DESC LIMIT 1") == 30)
        let format = try CamrollBinary.run(["-d", "file:" + source, "-f", "mjpeg", "-o", dir.file("f.jpg"), "--db", dir.file("c.db")])
        #expect(format.status == 64 && format.stderr.contains("'--format'"), "\(format.stderr)")
    }

    @Test func aCropThatDoesNotFitIsAUsageError() throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "--crop", "400x100", "-o", dir.file("x.jpg"), "--db", dir.file("c.db")])
        #expect(result.status == 64 && result.stderr.contains("does not fit in the 320x240 picture"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.jpg")))
        let pattern = try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "--crop", "4:3", "-o", dir.file("y.jpg"), "--db", dir.file("c.db")])
        #expect(pattern.status == 0)
        #expect(try Self.djpegSize(dir.file("y.jpg")) == "320 240")
        let square = try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "--crop", "1:1", "-o", dir.file("z.jpg"), "--db", dir.file("c.db")])
        #expect(square.status == 0)
        #expect(try Self.djpegSize(dir.file("z.jpg")) == "240 240")
    }

    /// A PNG with transparency: flattened onto white, encoded at -q, thumbnailed.
    @Test func aPNGWithAlphaIsSavedAndThumbnailed() throws {
        let dir = try TemporaryDirectory()
        // 64x48 RGBA: left half opaque red, right half fully transparent (white once flattened).
        let make = """
            import struct, zlib
            w, h = 64, 48
            rows = b''.join(b'\\0' + b''.join(struct.pack('BBBB', 255, 0, 0, 255 if x < 32 else 0) for x in range(w)) for _ in range(h))
            chunk = lambda t, d: struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
            open('\(dir.file("a.png"))', 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 6, 0, 0, 0))
                + chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b''))
            """
        #expect(try CamrollBinary.runProgram(["/usr/bin/python3", "-c", make]).status == 0)
        let result = try CamrollBinary.run(["-d", "file:" + dir.file("a.png"), "-q", "95", "-o", dir.file("a.jpg"), "--db", dir.file("c.db")])
        #expect(result.status == 0, "\(result.stderr)")
        let (header, rgb) = try JPEGDecoder().decodeRGB(try fileBytes(dir.file("a.jpg")))
        #expect(header.width == 64 && header.height == 48)
        let left = Array(rgb[(24 * 64 + 8) * 3..<(24 * 64 + 8) * 3 + 3]), right = Array(rgb[(24 * 64 + 56) * 3..<(24 * 64 + 56) * 3 + 3])
        #expect(left[0] > 240 && left[1] < 20 && left[2] < 20, "opaque red: \(left)")
        #expect(right.allSatisfy { $0 > 240 }, "transparent is white: \(right)")
        let db = try CatalogReader(dir.file("c.db"))
        #expect(try db.int("SELECT jpeg_quality FROM captures") == 95)
        #expect(try db.int("SELECT length(jpeg) FROM thumbnails") > 100)
        #expect(try Self.exif(dir.file("a.jpg"), ["ExifImageWidth"])["ExifImageWidth"] as? Int == 64)
        // 16 bits a sample (colour type 2): reduced to 8.
        let deep = """
            import struct, zlib
            rows = b''.join(b'\\0' + struct.pack('>HHH', 65535, 32768, 0) * 16 for _ in range(8))
            chunk = lambda t, d: struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
            open('\(dir.file("deep.png"))', 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 16, 8, 16, 2, 0, 0, 0))
                + chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b''))
            """
        #expect(try CamrollBinary.runProgram(["/usr/bin/python3", "-c", deep]).status == 0)
        let deepResult = try CamrollBinary.run(["-d", "file:" + dir.file("deep.png"), "-q", "100", "-o", dir.file("deep.jpg"), "--db", dir.file("c.db")])
        #expect(deepResult.status == 0, "\(deepResult.stderr)")
        let (_, orange) = try JPEGDecoder().decodeRGB(try fileBytes(dir.file("deep.jpg")))
        #expect(orange[0] > 245 && abs(Int(orange[1]) - 128) < 8 && orange[2] < 10, "16-bit orange: \(Array(orange.prefix(3)))")
        let small = try CamrollBinary.run(["-d", "file:" + dir.file("a.png"), "-r", "32x32", "-o", dir.file("s.jpg"), "--db", dir.file("c.db")])
        #expect(small.status == 0)
        #expect(try Self.djpegSize(dir.file("s.jpg")) == "32 24")
    }

    /// libspng is loaded when a PNG is read, not at start: without it (its file made unreadable
    /// to a process of its own, in a mount namespace) a photo from the pattern is taken as ever,
    /// a PNG is a one-line error that says what to install, and --version says it is missing.
    /// Root only (a mount namespace); CI runs as root.
    @Test func aPNGWithoutLibspngIsAOneLineErrorAndNothingElseNeedsIt() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return }
        let dir = try TemporaryDirectory()
        let make = """
            import struct, zlib
            chunk = lambda t, d: struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
            open('\(dir.file("a.png"))', 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 8, 8, 8, 2, 0, 0, 0))
                + chunk(b'IDAT', zlib.compress(b'\\0' * 25 * 8)) + chunk(b'IEND', b''))
            """
        #expect(try CamrollBinary.runProgram(["/usr/bin/python3", "-c", make]).status == 0)
        #expect(try CamrollBinary.run(["-d", "file:" + dir.file("a.png"), "-o", dir.file("with.jpg"), "--db", dir.file("c.db")]).status == 0)
        let library = URL(fileURLWithPath: "/usr/lib/x86_64-linux-gnu/libspng.so.0").resolvingSymlinksInPath().path
        #expect(FileManager.default.createFile(atPath: dir.file("empty.so"), contents: Data()))
        let script = """
            mount --bind '\(dir.file("empty.so"))' '\(library)' || exit 99
            '\(CamrollBinary.path)' snap -d pattern -r 64x48 -o '\(dir.file("pattern.jpg"))' --db '\(dir.file("c.db"))' --quiet || exit 98
            '\(CamrollBinary.path)' --version | grep -qx 'libspng (not installed)' || exit 97
            exec '\(CamrollBinary.path)' snap -d 'file:\(dir.file("a.png"))' -o '\(dir.file("without.jpg"))' --db '\(dir.file("c.db"))'
            """
        let result = try CamrollBinary.runProgram(["/usr/bin/unshare", "--mount", "sh", "-c", script])
        #expect(result.status == 69, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("cannot read '\(dir.file("a.png"))': PNG files need libspng: "), "\(result.stderr)")
        #expect(result.stderr.contains("apt install libspng0"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("without.jpg")))
        #expect(FileManager.default.fileExists(atPath: dir.file("pattern.jpg")))
    }

    /// The thumbnail of a portrait photo stored sideways is a portrait thumbnail.
    @Test func thumbnailsHonourOrientation() throws {
        let dir = try TemporaryDirectory()
        let photo = try Self.portraitPhoto(in: dir)
        #expect(try CamrollBinary.run(["-d", "file:" + photo, "-o", dir.file("copy.jpg"), "--db", dir.file("c.db")]).status == 0)
        let row = try CatalogReader(dir.file("c.db")).database.prepare("SELECT jpeg FROM thumbnails")
        #expect(try row.step())
        let thumbnail = try #require(row.blob(0))
        let header = try JPEGDecoder().header(of: thumbnail)
        #expect(header.width == 80 && header.height == 120, "\(header)")
    }

    /// Make comes from the USB device above the video node in sysfs (a tree laid out as the
    /// kernel lays it out for a UVC camera): its manufacturer string, else its IDs.
    @Test func makeIsTheUSBManufacturerFromSysfs() throws {
        let dir = try TemporaryDirectory()
        let usb = dir.file("sys/devices/pci0000:00/0000:00:14.0/usb1/1-2")
        let interface = usb + "/1-2:1.0"
        let fm = FileManager.default
        try fm.createDirectory(atPath: interface + "/video4linux/video3", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: dir.file("sys/class/video4linux/video3"), withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: dir.file("sys/class/video4linux/video3/device"), withDestinationPath: interface)
        try Data("046d\n".utf8).write(to: URL(fileURLWithPath: usb + "/idVendor"))
        try Data("082d\n".utf8).write(to: URL(fileURLWithPath: usb + "/idProduct"))
        #expect(PhotoOrigin.usbManufacturer(node: "video3", sysfs: dir.file("sys")) == "USB 046d:082d")
        try Data("Logitech\n".utf8).write(to: URL(fileURLWithPath: usb + "/manufacturer"))
        #expect(PhotoOrigin.usbManufacturer(node: "video3", sysfs: dir.file("sys")) == "Logitech")
        #expect(PhotoOrigin.usbManufacturer(node: "video9", sysfs: dir.file("sys")) == nil)
        // A device names itself: one whose name would drive the terminal is printed harmless.
        try Data("Logi\u{1B}]0;pwned\u{07}tech\u{202E}gpj\n".utf8).write(to: URL(fileURLWithPath: usb + "/manufacturer"))
        #expect(PhotoOrigin.usbManufacturer(node: "video3", sysfs: dir.file("sys")) == "Logi\\e]0;pwned\\x07tech\\u202egpj")
    }

    @Test func textADeviceGaveIsPrintedWithoutControlCharacters() {
        #expect("USB Camera: 1080p".printable == "USB Camera: 1080p")
        #expect("Kamera für Überwachung — 摄像头".printable == "Kamera für Überwachung — 摄像头")
        #expect("a\u{1B}[2Jb\tc\rd\u{7F}e\u{9B}f\u{2066}g".printable == #"a\e[2Jb\tc\rd\x7fe\x9bf\u2066g"#)
        #expect("a\u{1B}b\nc\td".printableLines == "a\\eb\nc\td")
        // A V4L2 text field: up to its NUL.
        let card: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0x63, 0x1B, 0x5B, 0x6D, 0, 0x41)
        #expect(V4L2Device.string(card) == #"c\e[m"#)
    }
}

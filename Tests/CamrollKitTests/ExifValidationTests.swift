@testable import CamrollKit
import Foundation
import Testing

/// Every kind of picture camroll writes, put through `exiftool -validate -warning -a` (an
/// independent reader and judge): no warning, no error. Times that are not camroll's to know
/// are not written; a file's own stay as they were; `--no-exif` leaves no APP1 at all.
@Suite struct ExifValidationTests {
    /// What exiftool's validation says of `path` beyond "Validate: OK": every Warning and Error
    /// line, and the Validate line itself when it is not OK. Empty: valid.
    static func problems(_ path: String) throws -> [String] {
        let result = try CamrollBinary.runProgram(["/usr/bin/exiftool", "-validate", "-warning", "-error", "-a", "-s", path])
        #expect(result.status == 0, "exiftool: \(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        var found: [String] = []
        var validated = false
        for line in lines {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { found.append(line); continue }
            if parts[0] == "Validate" && parts[1] == "OK" { validated = true; continue }
            found.append(line)
        }
        if !validated && found.isEmpty { found.append("no Validate line: \(result.stdout)") }
        return found
    }

    /// The markers of the segments before the image data, in order (0xE0 APP0, 0xE1 APP1…).
    static func markers(_ path: String) throws -> [UInt8] {
        JPEGSegments.headerSegments(of: try fileBytes(path)).map(\.marker)
    }

    /// A photo file as a camera or phone leaves it: taken 2020-01-02, a location (in EXIF and
    /// in XMP), Make and Model; valid itself, so what camroll makes of it can be judged.
    static func taggedPhoto(in dir: TemporaryDirectory, name: String = "tagged.jpg") throws -> String {
        let path = dir.file(name)
        let made = try CamrollBinary.run(["-d", "pattern", "-r", "640x480", "-o", path, "--db", dir.file("make.db"), "--no-exif"])
        #expect(made.status == 0, "\(made.stderr)")
        let tagged = try CamrollBinary.runProgram([
            "/usr/bin/exiftool", "-q", "-overwrite_original", "-DateTimeOriginal=2020:01:02 03:04:05",
            "-CreateDate=2020:01:02 03:04:06", "-GPSLatitude=48.85", "-GPSLatitudeRef=N", "-GPSLongitude=2.35",
            "-GPSLongitudeRef=E", "-XMP-exif:GPSLatitude=48.85", "-Make=Canon", "-Model=EOS 5D",
            "-ExifImageWidth=640", "-ExifImageHeight=480", path])
        #expect(tagged.status == 0, "\(tagged.stderr)")
        #expect(try problems(path) == [], "the source photo itself must be valid")
        return path
    }

    /// A PNG made by ImageMagick: 320x200, no metadata.
    static func png(in dir: TemporaryDirectory) throws -> String {
        let path = dir.file("src.png")
        let made = try CamrollBinary.runProgram(["/usr/bin/env", "convert", "-size", "320x200", "gradient:red-blue", path])
        #expect(made.status == 0, "convert: \(made.stderr)")
        return path
    }

    /// A PNG with an eXIf chunk holding the tagged photo's times, location and camera (320x200,
    /// red at the top). `orientation`: the EXIF Orientation written with them, if any.
    static func taggedPNG(in dir: TemporaryDirectory, name: String = "tagged.png", orientation: Int? = nil) throws -> String {
        let path = dir.file(name)
        let made = try CamrollBinary.runProgram(["/usr/bin/env", "convert", "-size", "320x200", "gradient:red-blue", path])
        #expect(made.status == 0, "convert: \(made.stderr)")
        let tagged = try CamrollBinary.runProgram([
            "/usr/bin/exiftool", "-q", "-q", "-overwrite_original", "-DateTimeOriginal=2020:01:02 03:04:05",
            "-CreateDate=2020:01:02 03:04:06", "-GPSLatitude=48.85", "-GPSLatitudeRef=N", "-GPSLongitude=2.35",
            "-GPSLongitudeRef=E", "-Make=Canon", "-Model=EOS 5D"] + (orientation.map { ["-Orientation#=\($0)"] } ?? []) + [path])
        #expect(tagged.status == 0, "\(tagged.stderr)")
        return path
    }

    static func snap(_ dir: TemporaryDirectory, _ arguments: [String]) throws {
        let result = try CamrollBinary.run(
            arguments + ["--db", dir.file("c.db"), "--quiet"],
            environment: ["XDG_CACHE_HOME": dir.file("cache"), "no_proxy": "*", "NO_PROXY": "*"])
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
    }

    /// The output kinds and the arguments that make them, from a tagged photo, a plain one, a
    /// PNG, and (when given) a URL of the tagged photo.
    static func outputKinds(tagged: String, plain: String, png: String, url: String?, taggedPNG: String? = nil)
        -> [(String, [String])] {
        var kinds: [(String, [String])] = [
            ("pattern", ["-d", "pattern", "-r", "640x480"]),
            ("pattern-crop", ["-d", "pattern", "-r", "640x480", "--crop", "1:1"]),
            ("pattern-max-bytes", ["-d", "pattern", "-r", "640x480", "--max-bytes", "20K"]),
            ("file-plain", ["-d", "file:" + plain]),
            ("file-plain-q", ["-d", "file:" + plain, "-q", "80"]),
            ("file-plain-resized", ["-d", "file:" + plain, "-r", "320x240"]),
            ("file-tagged", ["-d", "file:" + tagged]),
            ("file-tagged-resized", ["-d", "file:" + tagged, "-r", "320x240"]),
            ("file-tagged-cropped", ["-d", "file:" + tagged, "--crop", "1:1"]),
            ("file-tagged-placed-crop", ["-d", "file:" + tagged, "--crop", "301x203+5+7"]),
            ("file-tagged-max-bytes", ["-d", "file:" + tagged, "--max-bytes", "8K"]),
            ("file-tagged-strip-gps", ["-d", "file:" + tagged, "--strip-gps"]),
            ("png", ["-d", "file:" + png]),
            ("png-resized", ["-d", "file:" + png, "-r", "100x100"]),
            ("pattern-rotated", ["-d", "pattern", "-r", "640x480", "--rotate", "90"]),
            ("file-tagged-rotated", ["-d", "file:" + tagged, "--rotate", "270", "--flip", "h"]),
            ("file-tagged-greyscale", ["-d", "file:" + tagged, "--greyscale"]),
            ("pattern-overlaid", ["-d", "pattern", "-r", "640x480", "--timestamp", "--title", "Front door 你好"]),
            ("file-tagged-overlaid", ["-d", "file:" + tagged, "--timestamp", "--title", "مرحبا", "--rotate", "90"]),
        ]
        if let url {
            kinds += [("url", ["-d", url]), ("url-resized", ["-d", url, "-r", "320x240"])]
        }
        if let taggedPNG {
            kinds += [("file-tagged-png", ["-d", "file:" + taggedPNG]),
                      ("file-tagged-png-resized", ["-d", "file:" + taggedPNG, "-r", "160x100"])]
        }
        return kinds
    }

    @Test func everyKindOfOutputValidatesWithoutAWarning() throws {
        let dir = try TemporaryDirectory()
        let server = try URLSourceTests.Server(in: dir)
        let tagged = try Self.taggedPhoto(in: dir)
        try FileManager.default.copyItem(atPath: tagged, toPath: dir.file("www/photo.jpg"))
        let plain = dir.file("plain.jpg")
        try Self.snap(dir, ["-d", "pattern", "-r", "640x480", "-o", plain, "--no-exif"])
        let png = try Self.png(in: dir)
        let taggedPNG = try Self.taggedPNG(in: dir)
        var checked = 0
        for (name, arguments) in Self.outputKinds(
            tagged: tagged, plain: plain, png: png, url: server.url("photo.jpg"), taggedPNG: taggedPNG) {
            let out = dir.file("out/\(name).jpg")
            try Self.snap(dir, arguments + ["-o", out])
            #expect(try Self.problems(out) == [], "\(name)")
            // JFIF's APP0 first where it is kept, then the EXIF block.
            let markers = try Self.markers(out)
            if let app1 = markers.firstIndex(of: 0xE1), let app0 = markers.firstIndex(of: 0xE0) {
                #expect(app0 < app1, "\(name): segments \(markers.map { String($0, radix: 16) })")
            }
            checked += 1
        }
        #expect(checked == 23)
        // PNG output: the block in an eXIf chunk.
        for (name, arguments) in [("pattern", ["-d", "pattern", "-r", "320x240"]), ("file-tagged", ["-d", "file:" + tagged]),
                                  ("file-tagged-png", ["-d", "file:" + taggedPNG])] {
            let out = dir.file("out/\(name).png")
            try Self.snap(dir, arguments + ["-o", out])
            #expect(try Self.problems(out) == [], "\(name).png")
        }
    }

    /// A frame's block, as photo managers read it: EXIF 2.32, sRGB, the moment with its offset
    /// and milliseconds in all three times.
    @Test func aFrameCarriesExif232SRGBAndItsTimeThreeTimesOver() throws {
        let dir = try TemporaryDirectory()
        try Self.snap(dir, ["-d", "pattern", "-r", "320x240", "-o", dir.file("p.jpg")])
        let tags = try PhotoTests.exif(dir.file("p.jpg"), [
            "ExifVersion", "ColorSpace", "DateTimeOriginal", "CreateDate", "ModifyDate", "OffsetTime",
            "OffsetTimeOriginal", "OffsetTimeDigitized", "SubSecTime", "SubSecTimeOriginal", "SubSecTimeDigitized"])
        #expect(tags["ExifVersion"] as? String == "0232" || tags["ExifVersion"] as? Int == 232, "\(tags)")
        #expect(tags["ColorSpace"] as? Int == 1)
        let time = try #require(tags["DateTimeOriginal"] as? String)
        #expect(tags["CreateDate"] as? String == time && tags["ModifyDate"] as? String == time)
        for tag in ["OffsetTime", "OffsetTimeOriginal", "OffsetTimeDigitized"] {
            #expect((tags[tag] as? String)?.count == 6, "\(tag): \(String(describing: tags[tag]))")
        }
        let fraction = tags["SubSecTimeOriginal"].map { "\($0)" }
        #expect(fraction != nil && tags["SubSecTime"].map { "\($0)" } == fraction && tags["SubSecTimeDigitized"].map { "\($0)" } == fraction)
        #expect(try Self.markers(dir.file("p.jpg")).prefix(2) == [0xE0, 0xE1])
    }

    /// A file's and a URL's times and location are theirs: kept as they were on every path; a
    /// source without a time gets none (the catalog says when camroll read it).
    @Test func timesAreNeverInvented() throws {
        let dir = try TemporaryDirectory()
        let server = try URLSourceTests.Server(in: dir)
        let tagged = try Self.taggedPhoto(in: dir)
        try FileManager.default.copyItem(atPath: tagged, toPath: dir.file("www/photo.jpg"))
        let plain = dir.file("plain.jpg")
        try Self.snap(dir, ["-d", "pattern", "-r", "640x480", "-o", plain, "--no-exif"])
        let png = try Self.png(in: dir)
        let taggedPNG = try Self.taggedPNG(in: dir)
        let original = ["DateTimeOriginal", "CreateDate", "GPSLatitude", "GPSLongitude"]
        let source = try PhotoTests.exif(tagged, original)
        #expect(source["DateTimeOriginal"] as? String == "2020:01:02 03:04:05")
        for (name, arguments) in Self.outputKinds(
            tagged: tagged, plain: plain, png: png, url: server.url("photo.jpg"), taggedPNG: taggedPNG) {
            let out = dir.file("out/\(name).jpg")
            try Self.snap(dir, arguments + ["-o", out])
            let tags = try PhotoTests.exif(out, original + ["OffsetTimeOriginal", "SubSecTimeOriginal"])
            if name.hasPrefix("pattern") {
                #expect(tags["DateTimeOriginal"] != nil, "\(name)")
            } else if name.hasPrefix("file-tagged") || name.hasPrefix("url") {
                #expect(tags["DateTimeOriginal"] as? String == "2020:01:02 03:04:05", "\(name)")
                #expect(tags["CreateDate"] as? String == "2020:01:02 03:04:06", "\(name)")
                #expect(tags["OffsetTimeOriginal"] == nil && tags["SubSecTimeOriginal"] == nil, "\(name): \(tags)")
                if name.hasSuffix("strip-gps") {
                    #expect(tags["GPSLatitude"] == nil && tags["GPSLongitude"] == nil, "\(name)")
                } else {
                    #expect(tags["GPSLatitude"] as? Double == source["GPSLatitude"] as? Double, "\(name)")
                    #expect(tags["GPSLongitude"] as? Double == source["GPSLongitude"] as? Double, "\(name)")
                }
            } else {
                #expect(tags["DateTimeOriginal"] == nil && tags["CreateDate"] == nil, "\(name): \(tags)")
            }
        }
        // The catalog records when camroll read it.
        let db = try CatalogReader(dir.file("c.db"))
        #expect(try db.int("SELECT count(*) FROM captures WHERE captured_at LIKE '2020-%'") == 0)
    }

    /// `--no-exif`: no APP1 on any path (an untouched copy, a lossless crop that copies the
    /// markers, a re-encode, a PNG, a URL), so no GPS, maker note or thumbnail survives.
    @Test func noExifLeavesNoAPP1OnAnyPath() throws {
        let dir = try TemporaryDirectory()
        let server = try URLSourceTests.Server(in: dir)
        let tagged = try Self.taggedPhoto(in: dir)
        try FileManager.default.copyItem(atPath: tagged, toPath: dir.file("www/photo.jpg"))
        let plain = dir.file("plain.jpg")
        try Self.snap(dir, ["-d", "pattern", "-r", "640x480", "-o", plain, "--no-exif"])
        let png = try Self.png(in: dir)
        let taggedPNG = try Self.taggedPNG(in: dir)
        #expect(try Self.markers(tagged).filter { $0 == 0xE1 }.count == 2, "the source has EXIF and XMP")
        for (name, arguments) in Self.outputKinds(
            tagged: tagged, plain: plain, png: png, url: server.url("photo.jpg"), taggedPNG: taggedPNG) {
            let out = dir.file("out/\(name).jpg")
            try Self.snap(dir, arguments + ["-o", out, "--no-exif"])
            #expect(!(try Self.markers(out)).contains(0xE1), "\(name)")
            let tags = try PhotoTests.exif(out, ["GPSLatitude", "Make", "DateTimeOriginal"])
            #expect(tags["GPSLatitude"] == nil && tags["Make"] == nil && tags["DateTimeOriginal"] == nil, "\(name)")
            #expect(try Self.problems(out) == [], "\(name)")
        }
    }

    /// `--strip-gps` drops the location only, from EXIF and XMP, on the copy path too.
    @Test func stripGPSDropsOnlyTheLocation() throws {
        let dir = try TemporaryDirectory()
        let tagged = try Self.taggedPhoto(in: dir)
        for (name, extra) in [("copy", [String]()), ("resized", ["-r", "320x240"]), ("cropped", ["--crop", "1:1"])] {
            let out = dir.file("\(name).jpg")
            try Self.snap(dir, ["-d", "file:" + tagged, "-o", out, "--strip-gps"] + extra)
            let tags = try PhotoTests.exif(out, ["GPSLatitude", "GPSLongitude", "XMP-exif:GPSLatitude", "Make", "Model", "DateTimeOriginal"])
            #expect(tags["GPSLatitude"] == nil && tags["GPSLongitude"] == nil, "\(name): \(tags)")
            #expect(tags["Make"] as? String == "Canon" && tags["Model"] as? String == "EOS 5D", "\(name)")
            #expect(tags["DateTimeOriginal"] as? String == "2020:01:02 03:04:05", "\(name)")
            #expect(try Self.problems(out) == [], "\(name)")
        }
    }

    /// A PNG's eXIf chunk is its EXIF, as a JPEG's APP1 is: kept into the JPEG or PNG saved (its
    /// camera, times, location), its Orientation applied to the pixels, which are always decoded,
    /// and then written as 1.
    @Test func aPNGsOwnExifIsKeptAndItsOrientationApplied() throws {
        let dir = try TemporaryDirectory()
        let sideways = try Self.taggedPNG(in: dir, name: "sideways.png", orientation: 6)  // shown turned 90° clockwise
        for name in ["out.jpg", "out.png"] {
            let out = dir.file(name)
            try Self.snap(dir, ["-d", "file:" + sideways, "-o", out])
            let tags = try PhotoTests.exif(out, ["Make", "Model", "DateTimeOriginal", "CreateDate", "GPSLatitude", "Orientation",
                                                 "ImageWidth", "ImageHeight"])
            #expect(tags["Make"] as? String == "Canon" && tags["Model"] as? String == "EOS 5D", "\(name): \(tags)")
            #expect(tags["DateTimeOriginal"] as? String == "2020:01:02 03:04:05", "\(name)")
            #expect(tags["CreateDate"] as? String == "2020:01:02 03:04:06", "\(name)")
            #expect(tags["GPSLatitude"] as? Double == 48.85, "\(name)")
            #expect(tags["Orientation"] as? Int == 1, "\(name): \(tags)")
            #expect(tags["ImageWidth"] as? Int == 200 && tags["ImageHeight"] as? Int == 320, "\(name): \(tags)")
            #expect(try Self.problems(out) == [], "\(name)")
        }
        // Upright: the stored top row (red) is now the right-hand column.
        let (header, rgb) = try JPEGDecoder().decodeRGB(try fileBytes(dir.file("out.jpg")))
        func pixel(_ x: Int, _ y: Int) -> (Int, Int) {
            let at = (y * header.width + x) * 3
            return (Int(rgb[at]), Int(rgb[at + 2]))  // red, blue
        }
        let right = pixel(header.width - 1, header.height / 2), left = pixel(0, header.height / 2)
        #expect(right.0 > 200 && right.1 < 60, "right \(right)")
        #expect(left.0 < 60 && left.1 > 200, "left \(left)")
        // The catalog's dimensions are the saved picture's.
        let db = try CatalogReader(dir.file("c.db"))
        #expect(try db.int("SELECT count(*) FROM captures WHERE width = 200 AND height = 320") == 2)
    }

    /// A buffer's monotonic stamp, moved onto the wall clock; a stamp that cannot be believed
    /// gives the moment of dequeuing.
    @Test func aBufferTimestampIsMovedOntoTheWallClock() {
        let wall = Date(timeIntervalSince1970: 1_800_000_000)
        let now = 5_000_000_000  // µs of monotonic time
        let taken = FrameClock.wallTime(timestampMicroseconds: now - 250_000, monotonic: true, monotonicNow: now, wallNow: wall)
        #expect(abs(taken.timeIntervalSince(wall) + 0.25) < 1e-6)
        #expect(FrameClock.wallTime(timestampMicroseconds: now - 250_000, monotonic: false, monotonicNow: now, wallNow: wall) == wall)
        #expect(FrameClock.wallTime(timestampMicroseconds: now + 1000, monotonic: true, monotonicNow: now, wallNow: wall) == wall)
        #expect(FrameClock.wallTime(timestampMicroseconds: 0, monotonic: true, monotonicNow: now, wallNow: wall) == wall)
        #expect(FrameClock.wallTime(timestampMicroseconds: now - 61_000_000, monotonic: true, monotonicNow: now, wallNow: wall) == wall)
    }
}

@testable import CamrollKit
import Foundation
import Testing

/// PNG output: by the name's extension, or `--encoding png` for `-o -`; 8-bit RGB or grey,
/// lossless from the frame, the EXIF in an eXIf chunk that exiftool validates, catalog rows as
/// for a JPEG; `--max-bytes` and `--encoding gif` refused.
@Suite struct PNGOutputTests {
    @Test func aPNGNameSavesAValidPNGWithItsExifAndRows() throws {
        let dir = try TemporaryDirectory()
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "640x480", "-o", dir.file("src.jpg"), "--db", dir.file("c.db")]).status == 0)
        for (name, arguments, size, colour) in [
            ("pattern", ["-d", "pattern", "-r", "640x480"], "640x480", "sRGB"),
            ("grey-rotated", ["-d", "pattern", "-r", "640x480", "--greyscale", "--rotate", "90"], "480x640", "Gray"),
            ("file-resized", ["-d", "file:" + dir.file("src.jpg"), "-r", "320x240"], "320x240", "sRGB"),
        ] {
            let out = dir.file(name + ".png")
            let result = try CamrollBinary.run(arguments + ["-o", out, "--db", dir.file("c.db")])
            #expect(result.status == 0, "\(name): \(result.stderr)")
            #expect(result.stdout.contains("\(size) PNG"), "\(name): \(result.stdout)")
            #expect(try fileBytes(out).starts(with: PNGDecoder.signature), "\(name)")
            let identify = try CamrollBinary.runProgram(["/usr/bin/identify", "-format", "%m %wx%h %[colorspace] %z", out])
            #expect(identify.stdout == "PNG \(size) \(colour) 8", "\(name): \(identify.stdout)")
            #expect(try ExifValidationTests.problems(out) == [], "\(name)")
            let tags = try PhotoTests.exif(out, ["ExifVersion", "Software", "ExifImageWidth"])
            #expect(tags["Software"] as? String != nil && tags["ExifImageWidth"] as? Int == Int(size.split(separator: "x")[0]), "\(name): \(tags)")
            let db = try CatalogReader(dir.file("c.db"))
            let rows = try db.rows(
                "SELECT c.width || 'x' || c.height, c.jpeg_bytes, c.xxh128, s.bytes, s.xxh128, EXISTS (SELECT 1 FROM thumbnails WHERE capture_id = c.id) FROM captures c JOIN saves s ON s.capture_id = c.id WHERE s.path = '\(out)'",
                columns: 6)
            let bytes = try fileBytes(out)
            #expect(rows == [[size, "\(bytes.count)", XXH128.hex(of: bytes), "\(bytes.count)", XXH128.hex(of: bytes), "1"]], "\(name)")
        }
        // Lossless: the PNG of a file's pixels is those pixels.
        let (_, rgb) = try JPEGDecoder().decodeRGB(try fileBytes(dir.file("src.jpg")))
        #expect(try CamrollBinary.run(["-d", "file:" + dir.file("src.jpg"), "-o", dir.file("same.png"), "--db", dir.file("c.db")]).status == 0)
        let decoded = try PNGDecoder.decode(try fileBytes(dir.file("same.png")), subject: "same.png")
        #expect(decoded.width == 640 && decoded.pixels == rgb)
    }

    @Test func encodingPNGGoesToStandardOutput() throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.runProgram(["/bin/sh", "-c", "'\(CamrollBinary.path)' -d pattern -r 320x240 -o - --encoding png --db '\(dir.file("c.db"))' > '\(dir.file("out.png"))'"])
        #expect(result.status == 0, "\(result.stderr)")
        let identify = try CamrollBinary.runProgram(["/usr/bin/identify", "-format", "%m %wx%h", dir.file("out.png")])
        #expect(identify.stdout == "PNG 320x240")
    }

    @Test(arguments: [(["-o", "x.png", "--max-bytes", "1M"], "'--max-bytes' cannot be used with PNG output"),
                      (["-o", "x.jpg", "--encoding", "gif"], "invalid value 'gif' for '--encoding'"),
                      (["-o", "-", "--encoding", "png", "--max-bytes", "100K"], "'--max-bytes' cannot be used with PNG output")])
    func refusedOneLineExit64(_ arguments: [String], _ message: String) throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.run(["-d", "pattern", "--db", dir.file("c.db")] + arguments.map { $0 == "x.png" || $0 == "x.jpg" ? dir.file($0) : $0 })
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("camroll: error: \(message)"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count <= 2)
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.png")) && !FileManager.default.fileExists(atPath: dir.file("c.db")))
    }
}

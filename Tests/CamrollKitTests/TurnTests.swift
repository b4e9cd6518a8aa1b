@testable import CamrollKit
import Foundation
import Testing

/// `--rotate`, `--flip`, `--greyscale`: lossless on the DCT blocks where tjTransform can do it
/// (decoded pixels equal the original's turned), decoded otherwise; the catalog's size swapped;
/// greyscale one component; bad values one line and exit 64.
@Suite struct TurnTests {
    /// `path` decoded by djpeg to its luma alone (`-grayscale`: no chroma upsampling, so a
    /// lossless turn gives exactly the turned samples): (width, height, samples).
    static func luma(_ path: String) throws -> (Int, Int, [UInt8]) {
        let pgm = path + ".pgm"
        let result = try CamrollBinary.runProgram(["/usr/bin/djpeg", "-grayscale", "-pnm", "-outfile", pgm, path])
        #expect(result.status == 0, "djpeg: \(result.stderr)")
        let bytes = try fileBytes(pgm)
        // "P5", width, height, maxval, each after white space, then one white-space byte.
        var fields: [String] = [], current = "", index = 0
        while fields.count < 4 && index < bytes.count {
            let byte = bytes[index]
            index += 1
            if [0x20, 0x0A, 0x09, 0x0D].contains(byte) {
                if !current.isEmpty { fields.append(current); current = "" }
            } else {
                current.append(Character(UnicodeScalar(byte)))
            }
        }
        try #require(fields.count == 4 && fields[0] == "P5", "not a PGM: \(fields)")
        let width = try #require(Int(fields[1])), height = try #require(Int(fields[2]))
        let samples = Array(bytes[index...])
        try #require(samples.count == width * height)
        return (width, height, samples)
    }

    /// `samples` (width x height) turned as `turn` says, by plain index arithmetic.
    static func turned(_ samples: [UInt8], _ width: Int, _ height: Int, _ turn: ImageTurn) -> (Int, Int, [UInt8]) {
        var (w, h, s) = (width, height, samples)
        func map(_ outWidth: Int, _ outHeight: Int, _ source: (Int, Int) -> Int) {
            var out = [UInt8](repeating: 0, count: s.count)
            for y in 0..<outHeight { for x in 0..<outWidth { out[y * outWidth + x] = s[source(x, y)] } }
            (w, h, s) = (outWidth, outHeight, out)
        }
        let (w0, h0) = (w, h)
        switch turn.rotation {
        case 90: map(h0, w0) { x, y in (h0 - 1 - x) * w0 + y }
        case 180: map(w0, h0) { x, y in (h0 - 1 - y) * w0 + (w0 - 1 - x) }
        case 270: map(h0, w0) { x, y in x * w0 + (w0 - 1 - y) }
        default: break
        }
        let (w1, h1) = (w, h)
        switch turn.flip {
        case .horizontal: map(w1, h1) { x, y in y * w1 + (w1 - 1 - x) }
        case .vertical: map(w1, h1) { x, y in (h1 - 1 - y) * w1 + x }
        case nil: break
        }
        return (w, h, s)
    }

    /// A camera's MJPEG frame turned on its DCT blocks: every luma sample of the result is the
    /// original's, turned; the frame's size swapped for 90 and 270.
    @Test(arguments: [ImageTurn(rotation: 90), ImageTurn(rotation: 180), ImageTurn(rotation: 270),
                      ImageTurn(flip: .horizontal), ImageTurn(rotation: 90, flip: .vertical)])
    func anMJPEGFrameTurnsLosslessly(_ turn: ImageTurn) throws {
        let dir = try TemporaryDirectory()
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "640x480", "-o", dir.file("frame.jpg"), "--db", dir.file("c.db"), "--no-exif"]).status == 0)
        let frame = try fileBytes(dir.file("frame.jpg"))
        let pipeline = try ImagePipeline(quality: 90, edits: ImageEdits(turn: turn), origin: PhotoOrigin(make: "Logitech", model: "C920"))
        let image = try pipeline.jpeg(from: Frame(format: .mjpeg, width: 640, height: 480, bytesPerLine: 0, bytes: frame,
                                                 sequence: 1, capturedAt: Date()))
        #expect(image.quality == nil, "a lossless turn is not a re-encode")
        #expect((image.width, image.height) == (turn.swapsSides ? (480, 640) : (640, 480)))
        try Data(image.bytes).write(to: URL(fileURLWithPath: dir.file("out.jpg")))
        let (width, height, samples) = try Self.luma(dir.file("frame.jpg"))
        let expected = Self.turned(samples, width, height, turn)
        let got = try Self.luma(dir.file("out.jpg"))
        #expect(got.0 == expected.0 && got.1 == expected.1)
        let differing = zip(got.2, expected.2).filter { $0 != $1 }.count
        #expect(differing == 0 && got.2.count == expected.2.count, "\(differing) luma samples differ")
        #expect(try ExifValidationTests.problems(dir.file("out.jpg")) == [])
    }

    /// Through the binary: the catalog's size is the turned picture's, identify agrees, and a
    /// size off the block grid (320x180: 180 is not a whole number of 16-row MCUs… nor 8 after
    /// the turn) is decoded and turned instead, still right side round.
    @Test func theCatalogRecordsTheTurnedSize() throws {
        let dir = try TemporaryDirectory()
        for (name, arguments, size) in [
            ("r90", ["-r", "640x480", "--rotate", "90"], "480x640"),
            ("r270f", ["-r", "640x480", "--rotate", "270", "--flip", "h"], "480x640"),
            ("r180", ["-r", "640x480", "--rotate", "180"], "640x480"),
            ("odd", ["-r", "320x180", "--rotate", "90"], "180x320"),
        ] {
            let result = try CamrollBinary.run(["-d", "pattern", "-o", dir.file(name + ".jpg"), "--db", dir.file("c.db")] + arguments)
            #expect(result.status == 0, "\(name): \(result.stderr)")
            let identify = try CamrollBinary.runProgram(["/usr/bin/identify", "-format", "%wx%h", dir.file(name + ".jpg")])
            #expect(identify.stdout == size, "\(name): identify says \(identify.stdout)")
            let db = try CatalogReader(dir.file("c.db"))
            let rows = try db.rows("SELECT c.width || 'x' || c.height FROM captures c JOIN saves s ON s.capture_id = c.id WHERE s.path LIKE '%/\(name).jpg'", columns: 1)
            #expect(rows == [[size]], "\(name)")
            #expect(try PhotoTests.exif(dir.file(name + ".jpg"), ["ExifImageWidth"])["ExifImageWidth"] as? Int == Int(size.split(separator: "x")[0]))
            #expect(try ExifValidationTests.problems(dir.file(name + ".jpg")) == [], "\(name)")
        }
        // The decoded path turns the same way: its luma is the straight picture's, turned, within
        // what one more encoding changes.
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "320x180", "-q", "100", "-o", dir.file("straight.jpg"), "--db", dir.file("c.db")]).status == 0)
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "320x180", "-q", "100", "--rotate", "90", "-o", dir.file("odd100.jpg"), "--db", dir.file("c.db")]).status == 0)
        let straight = try Self.luma(dir.file("straight.jpg"))
        let expected = Self.turned(straight.2, straight.0, straight.1, ImageTurn(rotation: 90))
        let got = try Self.luma(dir.file("odd100.jpg"))
        #expect(got.0 == 180 && got.1 == 320)
        let error = zip(got.2, expected.2).map { abs(Int($0) - Int($1)) }.reduce(0, +) / max(1, got.2.count)
        #expect(error <= 2, "mean luma error \(error)")
    }

    /// --greyscale: one component (identify and exiftool say so), the luma as it was.
    @Test func greyscaleIsOneComponent() throws {
        let dir = try TemporaryDirectory()
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "640x480", "-o", dir.file("c.jpg"), "--db", dir.file("c.db")]).status == 0)
        for (name, arguments) in [("g", ["-d", "pattern", "-r", "640x480"]), ("gf", ["-d", "file:" + dir.file("c.jpg"), "-r", "320x240"]),
                                  ("gm", ["-d", "pattern", "--max-bytes", "12700"]), ("gr", ["-d", "pattern", "-r", "320x180", "--rotate", "90"])] {
            let result = try CamrollBinary.run(arguments + ["--greyscale", "-o", dir.file(name + ".jpg"), "--db", dir.file("c.db")])
            #expect(result.status == 0, "\(name): \(result.stderr)")
            let identify = try CamrollBinary.runProgram(["/usr/bin/identify", "-format", "%[colorspace] %[channels]", dir.file(name + ".jpg")])
            #expect(identify.stdout.hasPrefix("Gray"), "\(name): \(identify.stdout)")
            #expect(try PhotoTests.exif(dir.file(name + ".jpg"), ["ColorComponents"])["ColorComponents"] as? Int == 1, "\(name)")
            #expect(try ExifValidationTests.problems(dir.file(name + ".jpg")) == [], "\(name)")
        }
        // --max-bytes searched the greyscale JPEGs' sizes, not the colour ones'.
        #expect(try fileBytes(dir.file("gm.jpg")).count <= 12700)
        let db = try CatalogReader(dir.file("c.db"))
        #expect(try db.int("SELECT c.jpeg_quality FROM captures c JOIN saves s ON s.capture_id = c.id WHERE s.path LIKE '%/gm.jpg'") < 90)
        // Made from the camera's own JPEG, the luma is untouched.
        let colour = try Self.luma(dir.file("c.jpg")), grey = try Self.luma(dir.file("g.jpg"))
        #expect(colour.2 == grey.2)
    }

    @Test(arguments: [(["--rotate", "45"], "--rotate"), (["--rotate", "ninety"], "--rotate"), (["--flip", "x"], "--flip"),
                      (["--flip", ""], "--flip")])
    func badTurnsAreOneLineAndExit64(_ arguments: [String], _ option: String) throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.run(["-d", "pattern", "-o", dir.file("x.jpg"), "--db", dir.file("c.db")] + arguments)
        #expect(result.status == 64)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.first?.hasPrefix("camroll: error: invalid value '\(arguments[1])' for '\(option)'") == true, "\(result.stderr)")
        #expect(lines.count <= 2, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.jpg")))
    }
}

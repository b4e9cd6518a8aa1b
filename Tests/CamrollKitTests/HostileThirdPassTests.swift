@testable import CamrollKit
import Foundation
import Testing

/// The third hostile pass (issue 49): pictures larger than the memory camroll may have, text
/// that would drive a terminal, directories swapped under a run or a delete, a damaged catalog,
/// early signals, slow and odd servers.
@Suite(.serialized) struct HostileThirdPassTests {
    /// Writes a PNG of `width` x `height` RGB whose pixels are all zero (a few hundred kB holds
    /// 100 megapixels); `rows` of them only when given (the rest of the data is missing), and
    /// interlaced (Adam7) when asked.
    static func writePNG(_ path: String, width: Int, height: Int, rows: Int? = nil) throws {
        let script = """
            import struct, zlib
            w, h, rows = \(width), \(height), \(rows.map(String.init) ?? "None")
            chunk = lambda t, d: struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
            c = zlib.compressobj(9)
            row = b'\\0' * (1 + 3 * w)
            data = b''.join(c.compress(row) for _ in range(h if rows is None else rows))
            data += c.flush() if rows is None else c.flush(zlib.Z_SYNC_FLUSH)
            open('\(path)', 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))
                + chunk(b'IDAT', data) + (chunk(b'IEND', b'') if rows is None else b''))
            """
        let result = try CamrollBinary.runProgram(["/usr/bin/python3", "-c", script])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// A 292 kB PNG of 20000x4999 (under the 100-megapixel limit), a 65535² and a 60000² PNG and
    /// JPEG whose headers claim their size, under 300, 600 and 1200 MB of address space and none:
    /// never a trap (134), each either saved or exit 65 with a message.
    @Test(memoryLimitsApply) func aPictureLargerThanTheMemoryIsExit65NotATrap() throws {
        let dir = try TemporaryDirectory()
        try Self.writePNG(dir.file("wide.png"), width: 20000, height: 4999)
        try Self.writePNG(dir.file("65535.png"), width: 65535, height: 65535, rows: 16)
        try Self.writePNG(dir.file("60000.png"), width: 60000, height: 60000, rows: 16)
        try Data(jpegClaiming(width: 20000, height: 4999)).write(to: URL(fileURLWithPath: dir.file("wide.jpg")))
        try Data(jpegClaiming(width: 60000, height: 60000)).write(to: URL(fileURLWithPath: dir.file("60000.jpg")))
        for file in ["wide.png", "65535.png", "60000.png", "wide.jpg", "60000.jpg"] {
            for limit in [300, 600, 1200, 0] {
                for pixels in [nil, "100000000000"] {
                    let prefix = limit > 0 ? ["/usr/bin/prlimit", "--as=\(limit * 1_000_000)", "--"] : []
                    let result = try CamrollBinary.run(
                        ["-d", "file:" + dir.file(file), "-o", dir.file("out/\(file).jpg"), "--overwrite", "--db", dir.file("c.db"), "--no-progress"]
                            + (pixels.map { ["--max-pixels", $0] } ?? []), prefix: prefix)
                    let line = result.stderr.split(separator: "\n").first.map(String.init) ?? ""
                    #expect(result.status == 0 || result.status == 65, "\(file) under \(limit) MB: \(result.status) \(result.stderr)")
                    #expect(result.status == 0 || line.hasPrefix("camroll: error: "), "\(file) under \(limit) MB: \(result.stderr)")
                }
            }
        }
        // The PNG that trapped: its whole cost (decoded and encoded) named before any of it is taken.
        let refused = try CamrollBinary.run(
            ["-d", "file:" + dir.file("wide.png"), "-o", dir.file("w.jpg"), "--db", dir.file("c.db"), "--no-progress"],
            prefix: ["/usr/bin/prlimit", "--as=600000000", "--"])
        #expect(refused.status == 65)
        #expect(refused.stderr.hasPrefix("camroll: error: image too large for memory: 20000x4999 needs 600 MB"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("w.jpg")))
        // With room, it is saved, and decoding it no longer holds an RGBA copy beside the RGB
        // (697 MB peak before): its pixels are 300 MB.
        let saved = try CamrollBinary.runProgram(
            ["/usr/bin/time", "-f", "peak %M", CamrollBinary.path, "-d", "file:" + dir.file("wide.png"), "-o", dir.file("w.jpg"),
             "--db", dir.file("c.db"), "--no-progress"])
        #expect(saved.status == 0, "\(saved.stderr)")
        let peak = saved.stderr.split(separator: "\n").last.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
        #expect(peak > 0 && peak < 450_000, "peak RSS \(peak) kB")
        // The hint states what such a picture costs.
        let limited = try CamrollBinary.run(
            ["-d", "file:" + dir.file("wide.png"), "--max-pixels", "1000", "-o", dir.file("l.jpg"), "--db", dir.file("c.db")])
        #expect(limited.status == 65)
        #expect(limited.stderr.contains("--max-pixels 99980000 (it needs about 600 MB: 6 bytes a pixel"), "\(limited.stderr)")
    }

    /// The test pattern at its largest size, and a real 20000x4999 JPEG re-encoded, under a
    /// limit they do not fit in.
    @Test(memoryLimitsApply) func framesAndReencodingsTooLargeForTheMemoryAreExit65() throws {
        let dir = try TemporaryDirectory()
        let pattern = try CamrollBinary.run(
            ["-d", "pattern", "-r", "16384x16384", "-o", dir.file("p.jpg"), "--db", dir.file("c.db"), "--no-progress"],
            prefix: ["/usr/bin/prlimit", "--as=300000000", "--"])
        #expect(pattern.status == 65, "\(pattern.stderr)")
        #expect(pattern.stderr.hasPrefix("camroll: error: image too large for memory: 16384x16384 needs 537 MB"), "\(pattern.stderr)")
        try Self.writePNG(dir.file("wide.png"), width: 20000, height: 4999)
        #expect(try CamrollBinary.run(["-d", "file:" + dir.file("wide.png"), "-o", dir.file("wide.jpg"), "--db", dir.file("c.db")]).status == 0)
        for options in [["-q", "50"], ["--max-bytes", "20000"], ["--crop", "1:1"], ["-r", "640x480"], []] {
            let result = try CamrollBinary.run(
                ["-d", "file:" + dir.file("wide.jpg"), "-o", dir.file("r.jpg"), "--overwrite", "--db", dir.file("c.db"), "--no-progress"]
                    + options, prefix: ["/usr/bin/prlimit", "--as=300000000", "--"])
            #expect(result.status == 0 || result.status == 65, "\(options): \(result.status) \(result.stderr)")
        }
    }

    /// The row-by-row PNG decoder places an interlaced picture's passes where they belong.
    @Test func anInterlacedPNGDecodesAsItsPlainTwin() throws {
        let dir = try TemporaryDirectory()
        let script = """
            import struct, zlib
            w, h = 13, 11
            px = lambda x, y: bytes(((x * 19 + y * 7) % 256, (x * 3 + y * 29) % 256, (x * y * 5) % 256, (x * 40 + y * 20) % 256))
            chunk = lambda t, d: struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
            def png(path, interlaced):
                raw = b''
                if interlaced:
                    for x0, y0, dx, dy in [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]:
                        xs = range(x0, w, dx)
                        if not xs: continue
                        for y in range(y0, h, dy): raw += b'\\0' + b''.join(px(x, y) for x in xs)
                else:
                    for y in range(h): raw += b'\\0' + b''.join(px(x, y) for x in range(w))
                open(path, 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 6, 0, 0, 1 if interlaced else 0))
                    + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))
            png('\(dir.file("plain.png"))', False)
            png('\(dir.file("interlaced.png"))', True)
            """
        #expect(try CamrollBinary.runProgram(["/usr/bin/python3", "-c", script]).status == 0)
        let plain = try PNGDecoder.decode(try fileBytes(dir.file("plain.png")), subject: "plain")
        let interlaced = try PNGDecoder.decode(try fileBytes(dir.file("interlaced.png")), subject: "interlaced")
        #expect(plain.width == 13 && plain.height == 11)
        #expect(plain.pixels == interlaced.pixels)
        // Flattened onto white: pixel (1, 0) is (19, 3, 0) at alpha 40.
        let alpha = 40
        #expect(Array(plain.pixels[3..<6]) == [19, 3, 0].map { UInt8(($0 * alpha + 255 * (255 - alpha) + 127) / 255) })
    }

    /// A path, a URL, catalog values, EXIF Make and Model and arguments echoed in errors holding
    /// ESC[2J, OSC 52, BEL, C1 CSI and U+202E: list, show, stats, verify, devices, delete, --csv
    /// and twelve errors, run on a pty, write none of them raw; JSON gives the path exactly.
    @Test func noEscapeReachesTheTerminal() throws {
        let result = try CamrollBinary.runProgram(["/usr/bin/python3", repositoryFile("Tests/hostile/terminal_escapes.py"), CamrollBinary.path])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("0 failure(s)"), "\(result.stdout)")
    }
}

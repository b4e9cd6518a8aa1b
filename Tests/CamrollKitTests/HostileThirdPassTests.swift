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

    /// Every file under `directory`, recursively, not following links.
    static func files(under directory: String) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return [] }
        return walker.compactMap { $0 as? String }.filter { name in
            var status = stat()
            return lstat(directory + "/" + name, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
        }
    }

    /// `snap -o 'sw/{seq/1000}/{seq}.jpg'` while `sw` is moved away and a link to another
    /// directory put in its place: the run stops (73) at the next directory it moves into, and
    /// not one file goes to the other directory. With --jobs 4 too.
    @Test(arguments: [1, 4]) func aDirectorySwappedForALinkMidRunIsNotFollowed(jobs: Int) throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("elsewhere"), withIntermediateDirectories: true)
        let process = CamrollBinary.process(
            ["-d", "pattern", "-r", "64x48", "-n", "20000", "--jobs", String(jobs), "-o", dir.file("sw") + "/{seq/1000}/{seq}.jpg",
             "--db", dir.file("c.db"), "--no-progress"])
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Once the second group's directory is there (`sw/002`), the swap.
        var waited = 0
        func groups() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: dir.file("sw")))?.count ?? 0 }
        while groups() < 2 && waited < 20_000 && process.isRunning {
            usleep(1000)
            waited += 1
        }
        #expect(rename(dir.file("sw"), dir.file("sw.old")) == 0)
        #expect(symlink(dir.file("elsewhere"), dir.file("sw")) == 0)
        process.waitUntilExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 73, "\(stderr)")
        #expect(stderr.contains("camroll: error: the output directory \(dir.file("sw")) was replaced during the run"), "\(stderr)")
        #expect(Self.files(under: dir.file("elsewhere")).isEmpty)
        #expect(Self.files(under: dir.file("sw.old")).count >= 1000)
    }

    /// A link planted in the tree before the run (`t/02 -> ../other`) is not followed either.
    @Test(arguments: [1, 4]) func aLinkPlantedInTheOutputTreeIsNotFollowed(jobs: Int) throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("t"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir.file("other"), withIntermediateDirectories: true)
        #expect(symlink("../other", dir.file("t/02")) == 0)
        let result = try CamrollBinary.run(
            ["-d", "pattern", "-r", "64x48", "-n", "3000", "--jobs", String(jobs), "-o", dir.file("t") + "/{seq/1000}/{seq}.jpg",
             "--db", dir.file("c.db"), "--no-progress"])
        #expect(result.status == 73, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("camroll: error: cannot save under \(dir.file("t/02")): it is a symbolic link"), "\(result.stderr)")
        #expect(Self.files(under: dir.file("other")).isEmpty)
        #expect(Self.files(under: dir.file("t")).count == 1000)
        // Every save recorded its directory.
        let catalog = try CatalogReader(dir.file("c.db"))
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE directory_inode IS NULL") == 0)
    }

    /// `mv d d.real; ln -s victim d; camroll delete --run 1 [--force]` once unlinked five
    /// unrelated files in `victim`: now nothing there is touched, the rows stay `saved`, and
    /// the message says why; once the directory is back, the delete goes through.
    @Test(arguments: [false, true]) func deleteNeverUnlinksThroughASwappedDirectory(force: Bool) throws {
        let dir = try TemporaryDirectory()
        let saved = try CamrollBinary.run(
            ["-d", "pattern", "-r", "64x48", "-n", "5", "-o", dir.file("d") + "/{seq}.jpg", "--db", dir.file("c.db"), "--quiet"])
        #expect(saved.status == 0, "\(saved.stderr)")
        try FileManager.default.createDirectory(atPath: dir.file("victim"), withIntermediateDirectories: true)
        for seq in 1...5 {
            // Unrelated files, and one exactly like a save (the content check alone would pass it).
            if seq == 5 {
                try FileManager.default.copyItem(atPath: dir.file("d/5.jpg"), toPath: dir.file("victim/5.jpg"))
            } else {
                try Data("not a photo \(seq)".utf8).write(to: URL(fileURLWithPath: dir.file("victim/\(seq).jpg")))
            }
        }
        #expect(rename(dir.file("d"), dir.file("d.real")) == 0)
        #expect(symlink(dir.file("victim"), dir.file("d")) == 0)
        let refused = try CamrollBinary.run(["delete", "--run", "1", "--db", dir.file("c.db")] + (force ? ["--force"] : []))
        #expect(refused.status == 1)
        #expect(refused.stderr.hasPrefix(
            "camroll: error: 5 file(s) kept: \(dir.file("d")) is not the directory its run saved into: it is a symbolic link to another directory"),
            "\(refused.stderr)")
        #expect(!refused.stderr.contains("Use --force"))
        #expect(Self.files(under: dir.file("victim")).count == 5)
        #expect(Self.files(under: dir.file("d.real")).count == 5)
        let catalog = try CatalogReader(dir.file("c.db"))
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved'") == 5)
        // Back in place, the same directory: deleted.
        #expect(unlink(dir.file("d")) == 0 && rename(dir.file("d.real"), dir.file("d")) == 0)
        let deleted = try CamrollBinary.run(["delete", "--run", "1", "--db", dir.file("c.db")] + (force ? ["--force"] : []))
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(Self.files(under: dir.file("d")).isEmpty && Self.files(under: dir.file("victim")).count == 5)
    }

    /// `delete --force` of a save whose path is now a symbolic link once said "Use --force".
    @Test func deleteOfASaveReplacedByALinkSaysWhatItIs() throws {
        let dir = try TemporaryDirectory()
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-o", dir.file("a.jpg"), "--db", dir.file("c.db"), "--quiet"]).status == 0)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: dir.file("target.jpg")))
        #expect(unlink(dir.file("a.jpg")) == 0 && symlink(dir.file("target.jpg"), dir.file("a.jpg")) == 0)
        let result = try CamrollBinary.run(["delete", "--run", "1", "--force", "--db", dir.file("c.db")])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("camroll: error: 1 path(s) kept, not being a file camroll saved any more: \(dir.file("a.jpg")) (a symbolic link)"),
                "\(result.stderr)")
        #expect(!result.stderr.contains("Use --force"))
        #expect(FileManager.default.fileExists(atPath: dir.file("target.jpg")))
    }
}

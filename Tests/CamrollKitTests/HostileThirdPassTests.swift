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
        // Seen after the link is in (replaced) or in the moment between the rename and the link
        // (gone): the save stops either way, and says which.
        #expect(stderr.contains("camroll: error: the output directory \(dir.file("sw")) was replaced during the run")
                || stderr.contains("camroll: error: the output directory \(dir.file("sw")) is gone"), "\(stderr)")
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

    /// Writes `count` random bytes at `offset` of the file at `path`.
    static func scribble(_ path: String, at offset: Int, count: Int) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: Data((0..<count).map { _ in UInt8.random(in: 0...255) }))
    }

    /// 8 kB of random bytes in the middle of a catalog: snap once recorded a run into it and
    /// exited 0. Now 65 before any file is written: a small catalog is checked whole.
    @Test func aDamagedCatalogIsRefusedBeforeAnyFileIsWritten() throws {
        let dir = try TemporaryDirectory()
        let db = dir.file("c.db")
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-n", "300", "-o", dir.file("a/{seq}.jpg"), "--db", db, "--quiet"]).status == 0)
        let size = try FileManager.default.attributesOfItem(atPath: db)[.size] as? Int ?? 0
        #expect(size > 16384)
        try Self.scribble(db, at: size / 2 - 4096, count: 8192)
        let result = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-n", "3", "-o", dir.file("b/{seq}.jpg"), "--db", db])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("camroll: error: catalog \(db) is damaged, so nothing is saved: "), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("b")))
    }

    /// A catalog too large to check whole at every run: the pages a run's writes go through are,
    /// so damage at the end of its saves (where the run's rows would go) is refused too. (What
    /// the bounded check costs is the trace's "catalog checked" phase, a figure for
    /// docs/catalog.md, not asserted here: a loaded machine stretches any time.)
    @Test func aLargeCatalogDamagedWhereARunWritesIsRefused() throws {
        let dir = try TemporaryDirectory()
        let db = dir.file("c.db")
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "32x24", "-n", "6000", "-o", dir.file("a/{seq}.jpg"), "--db", db, "--quiet"]).status == 0)
        let traced = try CamrollBinary.run(
            ["-d", "pattern", "-r", "32x24", "-o", dir.file("t.jpg"), "--db", db, "--quiet"], environment: ["CAMROLL_TRACE": "1"])
        #expect(traced.status == 0, "\(traced.stderr)")
        #expect(traced.stderr.contains("catalog checked"), "\(traced.stderr)")
        // Every page in the file itself (a page the WAL holds a later copy of is read from there).
        try Database(path: db).execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let catalog = try CatalogReader(db)
        let pages = try catalog.int("PRAGMA page_count")
        #expect(pages > Catalog.wholeCheckPages)
        // The last leaf of `saves` (rows are appended there): the rightmost in the tree, whose
        // dbstat path sorts last.
        let lastLeaf = try catalog.int("SELECT pageno FROM dbstat WHERE name = 'saves' AND pagetype = 'leaf' ORDER BY path DESC LIMIT 1")
        try Self.scribble(db, at: (lastLeaf - 1) * 4096 + 8, count: 3000)
        let result = try CamrollBinary.run(["-d", "pattern", "-r", "32x24", "-o", dir.file("b/1.jpg"), "--db", db])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("is damaged, so nothing is saved"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("b")))
    }

    /// `-d ftp://…` (gopher, dict) once read as a by-id name: "no such device: /dev/v4l/by-id/ftp://…".
    @Test(arguments: ["ftp://example.org/a.jpg", "gopher://example.org/1", "dict://u:pw@example.org/d"])
    func anUnsupportedSchemeIsNamed(device: String) throws {
        let result = try CamrollBinary.run(["-d", device, "--quiet"])
        let scheme = String(device.prefix { $0 != ":" })
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("camroll: error: unsupported scheme '\(scheme)' in '"), "\(result.stderr)")
        #expect(result.stderr.contains("camroll fetches only http:// and https://"))
        #expect(!result.stderr.contains("pw@"))
    }

    /// A server trickling 3 bytes a second once held a download for hours; a 1 MB header was
    /// "Out of memory", 200 000 headers "the download was cut short".
    @Test(arguments: [
        ("trickle", [String](), 75, "timed out, the server sending under 1024 bytes a second"),
        ("trickle", ["--timeout", "2s"], 75, "timed out (Operation timed out after"),
        ("bigheader", [], 76, "the server's response has a header too large to read (over 100 kB)"),
        ("manyheaders", [], 76, "the server's response headers are over 64 kB"),
    ])
    func aHostileServerIsCutOffAndSaidSo(path: String, options: [String], status: Int32, message: String) throws {
        let dir = try TemporaryDirectory()
        let server = try URLSourceTests.Server(in: dir)
        let begin = Date()
        let result = try URLSourceTests.snap(dir, ["-d", server.url(path), "-o", dir.file("o.jpg"), "--no-progress"] + options)
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(Date().timeIntervalSince(begin) < 15)
        #expect(!FileManager.default.fileExists(atPath: dir.file("o.jpg")))
    }

    /// Credentials from ~/.netrc; a password given in the URL is warned about and hidden from
    /// /proc/PID/cmdline (what ps shows) while the run goes on.
    @Test func credentialsComeFromNetrcAndAPasswordInArgvIsHidden() throws {
        let dir = try TemporaryDirectory()
        let server = try URLSourceTests.Server(in: dir)
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-o", server.root + "/a.jpg", "--db", dir.file("setup.db"), "--quiet"]).status == 0)
        try FileManager.default.createDirectory(atPath: dir.file("home"), withIntermediateDirectories: true)
        try Data("machine 127.0.0.1\nlogin netuser\npassword netsecret\n".utf8).write(to: URL(fileURLWithPath: dir.file("home/.netrc")))
        chmod(dir.file("home/.netrc"), 0o600)
        let fetched = try CamrollBinary.run(
            ["-d", server.url("a.jpg"), "-o", dir.file("o.jpg"), "--db", dir.file("c.db"), "--quiet"],
            environment: ["HOME": dir.file("home"), "XDG_CACHE_HOME": dir.file("cache"), "no_proxy": "*", "NO_PROXY": "*"])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(server.requests.contains { $0.hasPrefix("/a.jpg 200") && $0.hasSuffix(" netuser:netsecret") }, "\(server.requests)")
        // A password in argv: /slow keeps the run waiting while its command line is read.
        let process = CamrollBinary.process(
            ["-d", "http://u:topsecret@127.0.0.1:\(server.port)/slow", "-o", dir.file("s.jpg"), "--db", dir.file("c.db"), "--no-progress"],
            environment: ["XDG_CACHE_HOME": dir.file("cache"), "no_proxy": "*", "NO_PROXY": "*"])
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var seen = 0
        while !server.requests.contains(where: { $0.hasPrefix("/slow") }) && seen < 5000 {
            usleep(1000)
            seen += 1
        }
        let commandLine = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(process.processIdentifier)/cmdline"))) ?? Data()
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let shown = String(decoding: commandLine.map { $0 == 0 ? 32 : $0 }, as: UTF8.self)
        #expect(shown.contains("http://u:*********@127.0.0.1"), "\(shown)")
        #expect(!shown.contains("topsecret"))
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(stderr.hasPrefix("camroll: warning: a password in a URL on the command line can be read by other users"), "\(stderr)")
    }

    /// `show --full` of a file over the picture limit once hinted at `--max-pixels`, which show
    /// does not take.
    @Test func showsHintNamesNoOptionShowLacks() throws {
        let dir = try TemporaryDirectory()
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-o", dir.file("a.jpg"), "--db", dir.file("c.db"), "--quiet"]).status == 0)
        try Data(jpegClaiming(width: 60000, height: 60000)).write(to: URL(fileURLWithPath: dir.file("a.jpg")))
        let result = try CamrollBinary.run(["show", "1", "--full", "--preview-mode", "symbols", "--color", "always", "--db", dir.file("c.db")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("60000x60000"), "\(result.stderr)")
        #expect(!result.stderr.contains("--max-pixels"), "\(result.stderr)")
        #expect(result.stderr.contains("show draws pictures of at most 100 megapixels"), "\(result.stderr)")
    }
}

extension HostileThirdPassTests {
    /// `--user-from FILE` and `--user-from env:NAME` give a URL's user and password, kept out of
    /// the arguments; what is wrong with them is said without echoing a password.
    @Test func credentialsComeFromAFileOrAnEnvironmentVariable() throws {
        let dir = try TemporaryDirectory()
        let server = try URLSourceTests.Server(in: dir)
        try URLSourceTests.photo(dir, "a.jpg", size: "64x48")
        try Data("fileuser:filesecret\nignored\n".utf8).write(to: URL(fileURLWithPath: dir.file("credentials")))
        let environment = ["XDG_CACHE_HOME": dir.file("cache"), "no_proxy": "*", "NO_PROXY": "*", "CAMERA_LOGIN": "envuser:envsecret"]
        func snap(_ arguments: [String]) throws -> CamrollBinary.Result {
            try CamrollBinary.run(["--db", dir.file("c.db"), "--no-progress", "--overwrite"] + arguments, environment: environment)
        }
        let fromFile = try snap(["-d", server.url("a.jpg"), "--user-from", dir.file("credentials"), "-o", dir.file("f.jpg")])
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        let fromEnvironment = try snap(["-d", server.url("a.jpg"), "--user-from", "env:CAMERA_LOGIN", "-o", dir.file("e.jpg")])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderr)")
        #expect(server.requests.contains { $0.hasPrefix("/a.jpg 200") && $0.hasSuffix(" fileuser:filesecret") }, "\(server.requests)")
        #expect(server.requests.contains { $0.hasSuffix(" envuser:envsecret") }, "\(server.requests)")
        let catalog = try CatalogReader(dir.file("c.db"))
        #expect(try catalog.int("SELECT count(*) FROM runs WHERE command LIKE '%secret%'") == 0)

        let refusals: [([String], Int32, String)] = [
            (["--user-from", dir.file("none")], 66, "camroll: error: cannot read --user-from \(dir.file("none")): No such file or directory"),
            (["--user-from", "env:NOT_SET_ANYWHERE"], 66, "camroll: error: --user-from env:NOT_SET_ANYWHERE: the environment variable NOT_SET_ANYWHERE is not set"),
            (["--user-from", dir.file("f.jpg")], 65, "camroll: error: --user-from \(dir.file("f.jpg")) must hold USER:PASSWORD on its first line"),
        ]
        for (options, status, first) in refusals {
            let result = try snap(["-d", server.url("a.jpg"), "-o", dir.file("r.jpg")] + options)
            #expect(result.status == status, "\(options): \(result.stderr)")
            #expect(result.stderr.hasPrefix(first), "\(options): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.file("r.jpg")))
        }
        let twice = try snap(["-d", server.url("a.jpg").replacing("http://", with: "http://u:p@"), "--user-from", dir.file("credentials"), "-o", dir.file("r.jpg")])
        #expect(twice.status == 64)
        #expect(twice.stderr.contains("camroll: error: '--user-from' gives the user and password: the URL must not carry them too"), "\(twice.stderr)")
        let notURL = try snap(["-d", "pattern", "--user-from", dir.file("credentials"), "-o", dir.file("r.jpg")])
        #expect(notURL.status == 64)
        #expect(notURL.stderr.hasPrefix("camroll: error: '--user-from' applies to a URL source"), "\(notURL.stderr)")
    }

    /// The builds README tells people to make (`make demo`'s release build, `make build`, the
    /// suites' `make unit-test`; `make install`'s static build has its own flags) are linked
    /// without `$ORIGIN` in their search path: the release build's RUNPATH once was
    /// `/opt/swift/usr/lib/swift/linux:$ORIGIN`, and a libxxhash.so.0 planted beside it ran.
    /// Here, what make would run; Tests/hostile/runpath.py (make hostile) checks the binaries.
    @Test func theBuildsReadmeNamesPutNoOriginInTheSearchPath() throws {
        let dry = try CamrollBinary.runProgram(["/usr/bin/make", "-n", "-C", repositoryFile(""), "build", "release", "unit-test"])
        #expect(dry.status == 0, "\(dry.stderr)")
        let builds = dry.stdout.split(separator: "\n").filter { $0.hasPrefix("swift build") || $0.hasPrefix("swift test") }
        #expect(builds.count == 3, "\(dry.stdout)")
        for line in builds { #expect(line.contains("--disable-local-rpath"), "\(line)") }
        let flags = try CamrollBinary.runProgram([repositoryFile("packaging/static-link-flags")])
        #expect(flags.status == 0 && flags.stdout.split(separator: "\n").contains("--disable-local-rpath"), "\(flags.stdout)\(flags.stderr)")
    }

    /// A catalog made by schema step 5 (run totals, no directory columns) is upgraded by step 6
    /// (and those after it): its old saves keep NULL directories (and are deleted by walking their path
    /// without following links), new ones record theirs.
    @Test func aCatalogOfSchemaFiveGainsTheDirectoriesOfItsSaves() throws {
        let dir = try TemporaryDirectory()
        let db = dir.file("c.db")
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-n", "3", "-o", dir.file("a/{seq}.jpg"), "--db", db, "--quiet"]).status == 0)
        try Database(path: db).execute(
            """
            ALTER TABLE saves DROP COLUMN directory_device; ALTER TABLE saves DROP COLUMN directory_inode;
            ALTER TABLE runs DROP COLUMN every_us; ALTER TABLE runs DROP COLUMN skipped_slots; DROP TABLE run_events;
            ALTER TABLE captures DROP COLUMN banner;
            \(OlderSchema.thumbnailsInCaptures) PRAGMA user_version = 5
            """)
        // Only read (a dry run does not migrate it), the older catalog is listed all the same.
        let dry = try CamrollBinary.run(["delete", "--run", "1", "--dry-run", "--db", db])
        #expect(dry.status == 0 && dry.stdout.contains("dry run: would delete 3 file(s)"), "\(dry.stdout)\(dry.stderr)")
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-n", "3", "-o", dir.file("b/{seq}.jpg"), "--db", db, "--quiet"]).status == 0)
        let catalog = try CatalogReader(db)
        #expect(try catalog.int("PRAGMA user_version") == Migrations.steps.count)
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE directory_inode IS NULL") == 3)
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE directory_inode IS NOT NULL AND path LIKE '%/b/%'") == 3)
        #expect(try catalog.int("SELECT saved_count FROM runs WHERE id = 2") == 3)
        let deleted = try CamrollBinary.run(["delete", "--run", "1", "--db", db])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(Self.files(under: dir.file("a")).isEmpty)
    }
}

extension HostileThirdPassTests {
    /// A signal that comes after camroll's first instruction but before its main runs: sent by a
    /// preloaded library's constructor, which the loader runs after the executable's
    /// .preinit_array and before main. It once killed the process (the default action: the
    /// signals were blocked only in main); now it waits, blocked, for the signal thread: exit
    /// 130/143 with a message, and no run row left 'running'.
    @Test(arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143))])
    func aSignalBeforeMainIsTakenNotDiedOf(signal: Int32, status: Int32) throws {
        let dir = try TemporaryDirectory()
        try Data("""
            #include <signal.h>
            #include <unistd.h>
            __attribute__((constructor)) static void early(void) { kill(getpid(), \(signal)); }
            """.utf8).write(to: URL(fileURLWithPath: dir.file("early.c")))
        let built = try CamrollBinary.runProgram(["/usr/bin/cc", "-shared", "-fPIC", "-o", dir.file("early.so"), dir.file("early.c")])
        #expect(built.status == 0, "\(built.stderr)")
        // posix_spawn with no signal blocked and the default actions, as a shell starts it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, dir.file("out"), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, dir.file("err"), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let arguments = [CamrollBinary.path, "-d", "pattern", "-r", "64x48", "-n", "50", "-o", dir.file("o/{seq}.jpg"),
                         "--db", dir.file("c.db"), "--no-progress"]
        let environment = ProcessInfo.processInfo.environment.merging(["LD_PRELOAD": dir.file("early.so")]) { $1 }
            .map { "\($0.key)=\($0.value)" }
        var argv = arguments.map { strdup($0) } + [nil]
        var envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        #expect(posix_spawn(&pid, CamrollBinary.path, &actions, &attributes, &argv, &envp) == 0)
        var waited: Int32 = 0
        while waitpid(pid, &waited, 0) < 0 && errno == EINTR {}
        let stderr = (try? String(contentsOfFile: dir.file("err"), encoding: .utf8)) ?? ""
        let killed = (waited & 0x7f) != 0
        #expect(!killed, "killed by signal \(waited & 0x7f): \(stderr)")
        #expect(!killed && (waited >> 8) & 0xff == status, "exit \((waited >> 8) & 0xff): \(stderr)")
        // Said: at once on stderr, or, once the run has begun, in its summary on stdout.
        let stdout = (try? String(contentsOfFile: dir.file("out"), encoding: .utf8)) ?? ""
        #expect(stderr.hasPrefix("camroll: stopped by SIG") || stdout.contains("cancelled"), "\(stdout)\(stderr)")
        if FileManager.default.fileExists(atPath: dir.file("c.db")) {
            #expect(try CatalogReader(dir.file("c.db")).int("SELECT count(*) FROM runs WHERE status = 'running'") == 0)
        }
    }

    /// A row a stopped delete left `deleting` whose path a later save took with the same bytes
    /// (a file: source saved twice to one name, in a catalog that did not mark the older row
    /// `replaced`): repair once unlinked the later save's file, as if it were the deleted one.
    @Test func repairNeverRemovesALaterSavesFileAtTheSamePath() throws {
        let dir = try TemporaryDirectory()
        let source = dir.file("source.jpg")
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-o", source, "--db", dir.file("other.db"), "--quiet"]).status == 0)
        for extra in [[], ["--overwrite"]] {
            let run = try CamrollBinary.run(["-d", "file:" + source, "-o", dir.file("a.jpg"), "--db", dir.file("c.db"), "--quiet"] + extra)
            #expect(run.status == 0, "\(run.stderr)")
        }
        try Database(path: dir.file("c.db")).execute("UPDATE saves SET status = 'deleting' WHERE id = 1")
        let repair = try CamrollBinary.run(["verify", "--repair", "--db", dir.file("c.db")])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.file("a.jpg")))
        let catalog = try CatalogReader(dir.file("c.db"))
        #expect(try catalog.text("SELECT status FROM saves WHERE id = 1") == "replaced")
        #expect(try catalog.text("SELECT status FROM saves WHERE id = 2") == "saved")
    }
}

@testable import CamrollKit
import Foundation
import Testing

/// Runs the built binary with the test pattern and checks stdout, stderr, status, files and rows.
@Suite struct SnapEndToEndTests {
    @Test func thousandSavesAreDecodableAndRecordedWithXxhsumDigests() throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.run([
            "snap", "-d", "pattern", "-n", "1000", "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3"),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("saved 1000/1000"))

        let files = dir.files(in: "out")
        #expect(files.count == 1000)
        #expect(files.first == dir.file("out/0001.jpg") && files.last == dir.file("out/1000.jpg"))

        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.text("SELECT status FROM runs") == "completed")
        #expect(try catalog.int("SELECT requested_count FROM runs") == 1000)
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved'") == 1000)
        let rows = try catalog.rows("SELECT path, xxh128, bytes FROM saves ORDER BY seq", columns: 3)
        let digests = try xxhsum(files)
        let decoder = try JPEGDecoder()
        for row in rows {
            let path = try #require(row[0])
            #expect(digests[path] == row[1], "\(path)")
            let bytes = try fileBytes(path)
            #expect(String(bytes.count) == row[2])
            let (header, _) = try decoder.decodeRGB(bytes)
            #expect(header == JPEGDecoder.Header(width: 1280, height: 720))
        }
        #expect(try catalog.text("PRAGMA integrity_check") == "ok")
    }

    /// The catalog's digests in `xxhsum -H2 -c` form check the files without camroll.
    /// A relative `-o` with `.` and `..` is recorded as the absolute path it names; the command
    /// is recorded as a shell would take it back, quotes in an argument quoted.
    @Test func pathsAreRecordedResolvedAndTheCommandQuoted() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("a/b"), withIntermediateDirectories: true)
        let result = try CamrollBinary.runProgram(
            ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", dir.file("a"), CamrollBinary.path,
             "snap", "-d", "pattern", "-r", "64x48", "-o", "./b/../../it's {seq}.jpg", "--db", dir.file("c.sqlite3")])
        #expect(result.status == 0, "\(result.stderr)")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        let path = try #require(try catalog.text("SELECT path FROM saves"))
        #expect(path == URL(fileURLWithPath: dir.file("it's 1.jpg")).standardizedFileURL.path)
        #expect(FileManager.default.fileExists(atPath: path))
        let command = try #require(try catalog.text("SELECT command FROM runs"))
        #expect(command.hasSuffix(" snap -d pattern -r 64x48 -o './b/../../it'\\''s {seq}.jpg' --db \(dir.file("c.sqlite3"))"), "\(command)")
    }

    @Test func xxhsumChecksTheFilesFromTheCatalogAlone() throws {
        let dir = try TemporaryDirectory()
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "-n", "20", "--stamp", "--quiet",
                                       "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3")]).status == 0)
        let rows = try CatalogReader(dir.file("c.sqlite3")).rows("SELECT xxh128, path FROM saves", columns: 2)
        let sums = rows.map { "\($0[0] ?? "")  \($0[1] ?? "")\n" }.joined()
        try Data(sums.utf8).write(to: URL(fileURLWithPath: dir.file("sums.xxh128")))
        let good = try CamrollBinary.runProgram(["/usr/bin/xxhsum", "-H2", "-c", dir.file("sums.xxh128")])
        #expect(good.status == 0 && good.stdout.components(separatedBy: ": OK").count - 1 == 20, "\(good.stdout)\(good.stderr)")
        var bytes = try fileBytes(dir.file("out/07.jpg"))
        bytes[bytes.count - 10] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: dir.file("out/07.jpg")))
        let bad = try CamrollBinary.runProgram(["/usr/bin/xxhsum", "-H2", "-c", dir.file("sums.xxh128")])
        #expect(bad.status != 0 && bad.stdout.contains("07.jpg: FAILED"))
    }

    @Test func framesAndStampMakeDistinctFilesThatDecodeAlike() throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.run([
            "-d", "pattern", "-r", "320x240", "-n", "3", "--frames", "2", "--stamp",
            "-o", dir.file("f{frame}-{seq}.jpg"), "--db", dir.file("c.sqlite3"),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let files = dir.files(in: ".", suffix: ".jpg")
        #expect(files.map { ($0 as NSString).lastPathComponent } == ["f1-1.jpg", "f1-2.jpg", "f1-3.jpg", "f2-4.jpg", "f2-5.jpg", "f2-6.jpg"])
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM captures") == 2)
        #expect(try catalog.int("SELECT count(DISTINCT xxh128) FROM saves") == 6)
        let decoder = try JPEGDecoder()
        let pixels = try files.map { try decoder.decodeRGB(fileBytes($0)).1 }
        #expect(pixels[0] == pixels[1] && pixels[1] == pixels[2])
        #expect(pixels[3] == pixels[5] && pixels[0] != pixels[3])
        // Each stamp, after SOI, is a comment segment of a whole number of 64 bytes (the rest of
        // the JPEG keeps its alignment), naming this run and the file's seq.
        let run = try #require(try catalog.text("SELECT uuid FROM runs"))
        for (index, file) in files.enumerated() {
            let bytes = try fileBytes(file)
            #expect(bytes[2] == 0xFF && bytes[3] == 0xFE)
            #expect((2 + (Int(bytes[4]) << 8 | Int(bytes[5]))) % 64 == 0)
            #expect(Verifier.stamps(in: bytes) == [Verifier.Stamp(runUUID: run, seq: index + 1, position: 0)])
        }
    }

    @Test func anImageFileIsSavedByteForByte() throws {
        let dir = try TemporaryDirectory()
        let source = dir.file("in.jpg")
        #expect(try CamrollBinary.run(["-d", "pattern", "-o", source, "--db", dir.file("c.sqlite3")]).status == 0)
        let result = try CamrollBinary.run([
            "-d", "file:" + source, "-n", "2", "-o", dir.file("copy/{seq}.jpg"), "--db", dir.file("c.sqlite3"),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        for copy in dir.files(in: "copy") { #expect(try fileBytes(copy) == fileBytes(source)) }
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.text("SELECT device FROM runs WHERE id = 2") == "file:" + source)
        #expect(try catalog.text("SELECT pixel_format FROM captures WHERE run_id = 2") == "JPEG")
        #expect(try catalog.rows("SELECT jpeg_quality FROM captures WHERE run_id = 2", columns: 1) == [[nil]])
    }

    @Test func jsonEventsAreOneObjectPerLine() throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.run([
            "-d", "pattern", "-r", "64x48", "-n", "5", "--json", "-o", dir.file("{seq}.jpg"), "--db", dir.file("c.sqlite3"),
        ])
        #expect(result.status == 0)
        let events = try result.stdout.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(events.first?["event"] as? String == "start")
        let summary = try #require(events.last)
        #expect(summary["event"] as? String == "summary")
        #expect(summary["saves"] as? Int == 5 && summary["status"] as? String == "completed")
        #expect((summary["latency_us"] as? [String: Any])?["p99"] != nil)
    }

    /// On a terminal (a pty from script(1)): one line redrawn in place, at most ten times a second.
    @Test func onATerminalProgressIsOneLiveLine() throws {
        let dir = try TemporaryDirectory()
        let command = [CamrollBinary.path, "-d", "pattern", "-r", "320x240", "-n", "5000", "-o", dir.file("{seq}.jpg"),
                       "--db", dir.file("c.sqlite3")].joined(separator: " ")
        let begin = Date()
        let result = try CamrollBinary.runProgram(["/usr/bin/script", "-qfec", command, "/dev/null"])
        let seconds = Date().timeIntervalSince(begin)
        #expect(result.status == 0)
        let redraws = result.stdout.components(separatedBy: "\r\u{1B}[2Ksaving ").count - 1
        #expect(redraws >= 1, "\(result.stdout)")
        #expect(Double(redraws) <= seconds * 10 + 2, "\(redraws) redraws in \(seconds) s")
        #expect(result.stdout.contains("saves/s") && result.stdout.contains("ETA"))
        #expect(result.stdout.contains("saved 5000/5000 files"))
    }

    @Test func withoutATerminalProgressIsAPlainLineAtMostOnceASecond() throws {
        let dir = try TemporaryDirectory()
        let begin = Date()
        let result = try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "-n", "20000", "-o", dir.file("{seq}.jpg"),
                                            "--db", dir.file("c.sqlite3")])
        let seconds = Date().timeIntervalSince(begin)
        let lines = result.stderr.split(separator: "\n")
        #expect(!result.stderr.contains("\r"))
        #expect(lines.allSatisfy { $0.hasPrefix("saving ") })
        #expect(Double(lines.count) <= seconds + 1, "\(lines.count) lines in \(seconds) s")
    }

    @Test func fsyncIsRecordedPerSave() throws {
        let dir = try TemporaryDirectory()
        for (flag, synced) in [([String](), 0), (["--fsync"], 1)] {
            let result = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-n", "3", "--quiet", "-o",
                                                dir.file("s\(synced)/{seq}.jpg"), "--db", dir.file("c.sqlite3")] + flag)
            #expect(result.status == 0)
        }
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.rows("SELECT synced, count(*) FROM saves GROUP BY synced", columns: 2) == [["0", "3"], ["1", "3"]])
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE synced = 1 AND path LIKE '%/s1/%'") == 3)
    }

    /// The catalog's work (opening it, committing the run's row) goes on beside the first
    /// frame's: with the catalog held by another writer for a while, the frame is taken and
    /// encoded while the run's row waits, and nothing is saved before that row is in. The
    /// statements of the rows to come are prepared on that thread before the capture's row, and
    /// the file takes its name only once that row is in.
    @Test func theFirstFrameIsEncodedWhileTheRunsRowWaitsForTheCatalog() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("c.sqlite3")
        let holder = try catalogHeldByAnotherWriter(path)
        let process = CamrollBinary.process(
            ["-d", "pattern", "-r", "64x48", "-o", dir.file("a.jpg"), "--db", path], environment: ["CAMROLL_TRACE": "1"])
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        // Far longer than a 64x48 frame takes, well short of the catalog's 5 s busy timeout.
        usleep(1_500_000)
        #expect(!FileManager.default.fileExists(atPath: dir.file("a.jpg")))
        try holder.execute("ROLLBACK")
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(stderr)")
        let phases = stderr.split(separator: "\n")
        let encoded = try #require(phases.firstIndex { $0.hasPrefix("trace: frame 1 encoded ") }, "\(stderr)")
        let committed = try #require(phases.firstIndex { $0.hasPrefix("trace: run row committed (catalog) ") }, "\(stderr)")
        let saved = try #require(phases.firstIndex { $0.hasPrefix("trace: first file saved ") }, "\(stderr)")
        #expect(encoded < committed && committed < saved, "\(stderr)")
        let prepared = try #require(phases.firstIndex { $0.hasPrefix("trace: statements ready (catalog) ") }, "\(stderr)")
        let captureRow = try #require(phases.firstIndex { $0.hasPrefix("trace: frame 1 capture row ") }, "\(stderr)")
        #expect(committed < prepared && prepared < captureRow && captureRow < saved, "\(stderr)")
        #expect(try CatalogReader(path).int("SELECT count(*) FROM saves WHERE status = 'saved'") == 1)
    }

    @Test func quietPrintsNothing() throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "--quiet", "-o", dir.file("{seq}.jpg"), "--db", dir.file("c.sqlite3")])
        #expect(result.status == 0 && result.stdout.isEmpty && result.stderr.isEmpty)
    }

    /// A name that calls the JPEG another format is saved as asked, with a warning; .jpg,
    /// .jpeg and names without a picture extension are not warned of; .png saves a PNG.
    @Test func aNameOfAnotherPictureFormatIsWarnedOf() throws {
        let dir = try TemporaryDirectory()
        for (name, warned) in [("a.tif", "'.tif'"), ("b.WebP", "'.WebP'"), ("c.jpg", nil), ("d.JPEG", nil), ("e", nil), ("f.png.jpg", nil)] {
            let result = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-o", dir.file(name), "--db", dir.file("c.sqlite3")])
            #expect(result.status == 0, "\(result.stderr)")
            let warning = warned.map { "camroll: warning: the photos are JPEG files: names ending in \($0) will mislead (name them .jpg)\n" }
            #expect(result.stderr == (warning ?? ""), "\(name): \(result.stderr)")
            #expect(try fileBytes(dir.file(name)).prefix(2) == [0xFF, 0xD8])
        }
        let png = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-o", dir.file("g.png"), "--db", dir.file("c.sqlite3")])
        #expect(png.status == 0 && png.stderr.isEmpty, "\(png.stderr)")
        #expect(try fileBytes(dir.file("g.png")).starts(with: PNGDecoder.signature))
    }

    @Test func defaultPathsFollowXDG() throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.run(
            ["-d", "pattern", "-r", "64x48"],
            environment: ["XDG_PICTURES_DIR": dir.file("pics"), "XDG_DATA_HOME": dir.file("data")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(dir.files(in: "pics/camroll").count == 1)
        #expect(FileManager.default.fileExists(atPath: dir.file("data/camroll/catalog.sqlite3")))
    }

    /// Two shots in one second share `{date}_{time}`: the default naming keeps the first and
    /// numbers the second, as a phone does. (The names the next seconds would get are taken
    /// beforehand, so the clash happens whenever the run starts.)
    @Test func defaultNamingNeverFailsOnASecondShotInTheSameSecond() throws {
        let dir = try TemporaryDirectory()
        let pictures = dir.file("pics/camroll")
        try FileManager.default.createDirectory(atPath: pictures, withIntermediateDirectories: true)
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd_HHmmss"
        let now = Date()
        for second in 0..<5 {
            let name = formatter.string(from: now.addingTimeInterval(Double(second))) + "_1.jpg"
            try Data("earlier shot".utf8).write(to: URL(fileURLWithPath: pictures + "/" + name))
        }
        let result = try CamrollBinary.run(
            ["-d", "pattern", "-r", "64x48"],
            environment: ["XDG_PICTURES_DIR": dir.file("pics"), "XDG_DATA_HOME": dir.file("data")])
        #expect(result.status == 0, "\(result.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: pictures)
        let numbered = names.filter { $0.hasSuffix("_1-2.jpg") }
        #expect(numbered.count == 1 && names.count == 6, "\(names)")
        let catalog = try CatalogReader(dir.file("data/camroll/catalog.sqlite3"))
        #expect(try catalog.text("SELECT path FROM saves") == pictures + "/" + (numbered.first ?? ""))
        for name in names where !name.hasSuffix("-2.jpg") {
            #expect(try String(contentsOfFile: pictures + "/" + name, encoding: .utf8) == "earlier shot")
        }
    }

    @Test func helpAndVersion() throws {
        for arguments in [["--help"], ["-h"], ["help"]] {
            let result = try CamrollBinary.run(arguments)
            #expect(result.status == 0 && result.stdout.contains("USAGE: camroll"))
        }
        let snapHelp = try CamrollBinary.run(["help", "snap"])
        #expect(snapHelp.stdout == (try CamrollBinary.run(["snap", "--help"])).stdout)
        #expect(snapHelp.stdout.contains("--count"))
        #expect(try CamrollBinary.run(["--version"]).stdout.hasPrefix("camroll "))
    }
}

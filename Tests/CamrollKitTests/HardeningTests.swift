@testable import CamrollKit
import CTurboJPEG
import Foundation
import Testing

/// The holes a hostile user found (never a trap, never a false pass, nothing saved lost), each
/// reproduced as it was found, against the built binary and real files and catalogs.
@Suite struct HardeningTests {
    func snap(_ dir: TemporaryDirectory, _ arguments: [String], environment: [String: String] = [:]) throws -> CamrollBinary.Result {
        try CamrollBinary.run(options(arguments, adding: ["--db", dir.file("c.sqlite3")]), environment: environment)
    }

    func thumbnailSize(_ dir: TemporaryDirectory) throws -> JPEGDecoder.Header {
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        let thumbnail = try #require(try catalog.database.prepare("SELECT jpeg FROM thumbnails ORDER BY capture_id DESC").stepBlob())
        return try JPEGDecoder().decodeRGB(thumbnail).0
    }

    /// Once a trap (SIGILL) in the thumbnail code, the run left `running`.
    @Test(arguments: [("4096x16", "160x120", 160, 1), ("4096x16", "8x8", 8, 1), ("3000x300", "8x8", 8, 1), ("16x4096", "160x120", 1, 120)])
    func wideAndTallPicturesGetThumbnailsInsideTheirBox(size: String, box: String, width: Int, height: Int) throws {
        let dir = try TemporaryDirectory()
        let result = try snap(dir, ["-d", "pattern", "-r", size, "--thumbnail", box, "-o", dir.file("x.jpg")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try thumbnailSize(dir) == JPEGDecoder.Header(width: width, height: height))
        // The same through file:, with the JPEG just saved.
        let again = try snap(dir, ["-d", "file:" + dir.file("x.jpg"), "--thumbnail", box, "-o", dir.file("y.jpg")])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try thumbnailSize(dir) == JPEGDecoder.Header(width: width, height: height))
    }

    /// Once 240x135 for the 160x120 box.
    @Test(arguments: [("1920x1080", "160x120", 160, 90), ("1920x1080", "320x240", 320, 180), ("640x480", "160x120", 160, 120),
                      ("64x48", "160x120", 64, 48)])
    func thumbnailsFitTheirBoxWithTheAspectKept(size: String, box: String, width: Int, height: Int) throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, ["-d", "pattern", "-r", size, "--thumbnail", box, "-o", dir.file("x.jpg")]).status == 0)
        #expect(try thumbnailSize(dir) == JPEGDecoder.Header(width: width, height: height))
    }

    /// A 460-byte JPEG whose frame header claims 60000x60000 once asked for 10.8 GB and trapped.
    @Test(memoryLimitsApply) func aJPEGClaimingAHugeSizeIsRefusedBeforeDecoding() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, ["-d", "pattern", "-r", "64x48", "-o", dir.file("small.jpg")]).status == 0)
        try Data(jpegClaiming(width: 60000, height: 60000)).write(to: URL(fileURLWithPath: dir.file("huge.jpg")))
        let result = try CamrollBinary.runProgram(
            ["/usr/bin/prlimit", "--as=2000000000", "--", CamrollBinary.path, "-d", "file:" + dir.file("huge.jpg"),
             "-o", dir.file("out.jpg"), "--db", dir.file("c.sqlite3")])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("60000x60000 (3600 megapixels), over the limit of 100 megapixels"), "\(result.stderr)")
        #expect(result.stderr.contains("--max-pixels"))
        #expect(!FileManager.default.fileExists(atPath: dir.file("out.jpg")))
        // The limit is the user's to set.
        let lowered = try snap(dir, ["-d", "file:" + dir.file("small.jpg"), "--max-pixels", "1000", "-o", dir.file("o2.jpg")])
        #expect(lowered.status == 65 && lowered.stderr.contains("64x48"))
    }

    /// turbojpeg sizes its buffers with C ints; a worst case over 2 GB once trapped in Int32().
    @Test func aPictureTooLargeToEncodeIsAnError() throws {
        let encoder = try JPEGEncoder()
        #expect(throws: CamrollError.self) { try encoder.ensureOutput(width: 26800, height: 26800, subsampling: TJSAMP_420) }
        #expect(try encoder.ensureOutput(width: 640, height: 480, subsampling: TJSAMP_420) > 0)
    }

    /// `snap -o x.jpg; snap --overwrite -o x.jpg; delete --run 1` once removed run 2's file.
    @Test func deletingAReplacedSaveKeepsTheFileThatReplacedIt() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, ["-d", "pattern", "-r", "64x48", "-o", dir.file("x.jpg")]).status == 0)
        #expect(try snap(dir, ["-d", "pattern", "-r", "128x96", "-o", dir.file("x.jpg"), "--overwrite"]).status == 0)
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.rows("SELECT id, status FROM saves ORDER BY id", columns: 2) == [["1", "replaced"], ["2", "saved"]])
        let delete = try CamrollBinary.run(["delete", "--run", "1", "--db", dir.file("c.sqlite3")])
        #expect(delete.status == 66 && delete.stderr.contains("nothing to delete"))
        #expect(try JPEGDecoder().header(of: fileBytes(dir.file("x.jpg"))) == JPEGDecoder.Header(width: 128, height: 96))
        #expect(try catalog.text("SELECT status FROM saves WHERE id = 2") == "saved")
        // Deleting run 2 removes the file, as asked.
        #expect(try CamrollBinary.run(["delete", "--run", "2", "--db", dir.file("c.sqlite3")]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.jpg")))
    }

    /// A catalog written before the `replaced` state: the migration marks older rows, and delete
    /// checks for a later owner of the path all the same.
    @Test func deleteNeverRemovesAFileALaterSaveOwns() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, ["-d", "pattern", "-r", "64x48", "-o", dir.file("x.jpg")]).status == 0)
        #expect(try snap(dir, ["-d", "pattern", "-r", "128x96", "-o", dir.file("x.jpg"), "--overwrite"]).status == 0)
        let database = try Database(path: dir.file("c.sqlite3"))
        try database.execute("UPDATE saves SET status = 'saved'")  // as an older camroll left it
        let delete = try CamrollBinary.run(["delete", "--run", "1", "--db", dir.file("c.sqlite3")])
        #expect(delete.status == 0 && delete.stdout.contains("deleted 0 file(s)") && delete.stdout.contains("later save"), "\(delete.stdout)")
        #expect(FileManager.default.fileExists(atPath: dir.file("x.jpg")))
        #expect(try database.scalarText("SELECT status FROM saves WHERE id = 1") == "replaced")
    }

    /// `verify /nonexistent.jpg` once said "verified 0 files" and exited 0.
    @Test func verifyOfAPathNotInTheCatalogFails() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, ["-d", "pattern", "-r", "64x48", "-o", dir.file("x.jpg")]).status == 0)
        try Data("stranger".utf8).write(to: URL(fileURLWithPath: dir.file("stranger.jpg")))
        for path in ["/nonexistent.jpg", dir.file("stranger.jpg")] {
            let result = try CamrollBinary.run(["verify", path, "--db", dir.file("c.sqlite3")])
            #expect(result.status == 1)
            #expect(result.stderr.contains("\(path) is not in the catalog"), "\(result.stderr)")
        }
        let both = try CamrollBinary.run(["verify", dir.file("x.jpg"), "/nonexistent.jpg", "--db", dir.file("c.sqlite3")])
        #expect(both.status == 1 && both.stdout.contains("1 ok"))
        #expect(try CamrollBinary.run(["verify", dir.file("x.jpg"), "--db", dir.file("c.sqlite3")]).status == 0)
    }

    /// libjpeg-turbo cannot decode CMYK to RGB; a valid CMYK JPEG was refused as corrupt.
    @Test func aCMYKJPEGIsSavedAndThumbnailed() throws {
        let dir = try TemporaryDirectory()
        let width = 96, height = 64
        // Inverted CMYK, as Adobe writes it: C=255-R… a red-to-blue ramp.
        var cmyk = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height { for x in 0..<width { cmyk[(y * width + x) * 4] = UInt8(255 - x * 255 / width) } }
        let handle = try #require(tjInitCompress())
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        #expect(tjCompress2(handle, cmyk, Int32(width), 0, Int32(height), Int32(TJPF_CMYK.rawValue), &output, &size,
                            Int32(TJSAMP_444.rawValue), 90, 0) == 0)
        let jpeg = Array(UnsafeBufferPointer(start: output, count: Int(size)))
        tjFree(output)
        try Data(jpeg).write(to: URL(fileURLWithPath: dir.file("cmyk.jpg")))
        #expect(try JPEGDecoder().header(of: jpeg).isCMYK)

        let result = try snap(dir, ["-d", "file:" + dir.file("cmyk.jpg"), "-o", dir.file("saved.jpg")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try fileBytes(dir.file("saved.jpg")) == jpeg)
        #expect(try thumbnailSize(dir) == JPEGDecoder.Header(width: 96, height: 64))
        // Left edge: no cyan ink (C stored as 255) → red.
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        let thumbnail = try #require(try catalog.database.prepare("SELECT jpeg FROM thumbnails").stepBlob())
        let rgb = try JPEGDecoder().decodeRGB(thumbnail).1
        #expect(rgb[0] > 200 && rgb[1] > 200, "first pixel \(rgb[0...2])")
        let right = (96 - 1) * 3
        #expect(rgb[right] < 40, "last pixel of the row \(rgb[right...(right + 2)])")
    }

    /// `--color never` once still coloured errors on a terminal; `--color always` added none in a pipe.
    @Test func colorFollowsTheColorOption() throws {
        let dir = try TemporaryDirectory()
        var environment = ["NO_COLOR": ""]
        let piped = try CamrollBinary.run(["-d", "pattern", "--color", "always", "-n", "0"], environment: environment)
        #expect(piped.status == 64 && piped.stderr.contains("\u{1B}[1;31merror:"), "\(piped.stderr)")
        let command = "\(CamrollBinary.path) -d pattern --color never -n 0"
        environment["TERM"] = "xterm"
        let onTerminal = try CamrollBinary.runProgram(["/usr/bin/script", "-qfec", command, "/dev/null"], environment: environment)
        #expect(onTerminal.stdout.contains("camroll: error: invalid value '0'"), "\(onTerminal.stdout)")
        #expect(!onTerminal.stdout.contains("\u{1B}["), "\(onTerminal.stdout)")
        let auto = try CamrollBinary.runProgram(
            ["/usr/bin/script", "-qfec", "\(CamrollBinary.path) -d pattern -n 0", "/dev/null"], environment: environment)
        #expect(auto.stdout.contains("\u{1B}[1;31merror:"), "\(auto.stdout)")
        let noColor = try CamrollBinary.runProgram(
            ["/usr/bin/script", "-qfec", "\(CamrollBinary.path) -d pattern -n 0", "/dev/null"], environment: ["NO_COLOR": "1", "TERM": "xterm"])
        #expect(!noColor.stdout.contains("\u{1B}["), "\(noColor.stdout)")
        _ = dir
    }

    /// A valid 250-byte name once failed: the temporary name added ~20 bytes past NAME_MAX.
    /// The highest rate a camera lists, set as its time a frame: 10 000 000 frames a second (a
    /// UVC interval of 100 ns) trapped converting its thousandths to 32 bits.
    @Test func anyRateADeviceListsBecomesATimeAFrame() throws {
        let usual = try #require(V4L2Camera.timePerFrame(framesPerSecond: 30))
        #expect(usual.numerator == 1000 && usual.denominator == 30_000)
        let fractional = try #require(V4L2Camera.timePerFrame(framesPerSecond: 7.5))
        #expect(fractional.numerator == 1000 && fractional.denominator == 7_500)
        let fast = try #require(V4L2Camera.timePerFrame(framesPerSecond: 10_000_000))
        #expect(fast.numerator == 1 && fast.denominator == 10_000_000)
        let fastest = try #require(V4L2Camera.timePerFrame(framesPerSecond: Double(UInt32.max) * 2))
        #expect(fastest.numerator == 1 && fastest.denominator == UInt32.max)
        #expect(V4L2Camera.timePerFrame(framesPerSecond: 1 / Double(UInt32.max)) == nil)
        #expect(V4L2Camera.timePerFrame(framesPerSecond: .infinity) == nil)
    }

    /// A size a driver grants bounds the arithmetic after it (a libv4lconvert buffer of
    /// 65535x65535 did not fit its 32-bit size and trapped): past 16384 it is refused.
    @Test func aFrameSizeADriverGrantsIsBounded() {
        #expect(Resolution(width: 16384, height: 16384).isWithinLimits)
        #expect(Resolution(width: 1, height: 1).isWithinLimits)
        #expect(!Resolution(width: 65535, height: 65535).isWithinLimits)
        #expect(!Resolution(width: 640, height: 0).isWithinLimits)
        #expect(!Resolution(width: Int(UInt32.max), height: 480).isWithinLimits)
    }

    @Test func aLongValidFileNameIsSaved() throws {
        let dir = try TemporaryDirectory()
        let name = String(repeating: "é", count: 60) + String(repeating: "n", count: 126) + ".jpg"  // 250 bytes
        #expect(name.utf8.count == 250)
        let result = try snap(dir, ["-d", "pattern", "-r", "64x48", "-o", dir.file(name)])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try JPEGDecoder().header(of: fileBytes(dir.file(name))).width == 64)
        #expect(AtomicFileWriter.temporaryName(for: Substring(name)).utf8.count <= 255)
        let tooLong = try snap(dir, ["-d", "pattern", "-r", "64x48", "-o", dir.file(String(repeating: "x", count: 256))])
        #expect(tooLong.status == 73 && tooLong.stderr.contains("File name too long"), "\(tooLong.stderr)")
    }

    /// The catalog on a full file system: once exit 74 with no summary, the run left `running`,
    /// files without rows. Now: saving stops at once, the summary says how many files have no
    /// row, and `verify --repair` records them once there is room.
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aFullCatalogDiskStopsTheRunAndRepairRecordsTheRest() throws {
        let dir = try TemporaryDirectory()
        let mountPoint = dir.file("catalog")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        let mount = try CamrollBinary.runProgram(["/bin/mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mountPoint])
        try #require(mount.status == 0, "cannot mount a tmpfs: \(mount.stderr)")
        defer { _ = try? CamrollBinary.runProgram(["/bin/umount", mountPoint]) }
        let catalogPath = mountPoint + "/c.sqlite3"
        let result = try CamrollBinary.run(
            ["-d", "pattern", "-r", "64x48", "-n", "100000", "--thumbnail", "none", "-o", dir.file("out/{seq}.jpg"),
             "--db", catalogPath, "--json"])
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr.contains("no space left on device"), "\(result.stderr)")
        #expect(result.stdout.contains("\"event\":\"summary\""), "no summary: \(result.stdout.suffix(300))")
        let files = dir.files(in: "out")
        #expect(files.count < 100000)

        _ = try CamrollBinary.runProgram(["/bin/mount", "-o", "remount,size=64m", mountPoint])
        let repair = try CamrollBinary.run(["verify", "--repair", "--db", catalogPath])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        let catalog = try CatalogReader(catalogPath)
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved'") == files.count, "\(repair.stdout)")
        #expect(try catalog.int("SELECT count(*) FROM runs WHERE status = 'running'") == 0)
        #expect(try catalog.text("PRAGMA integrity_check") == "ok")
    }

    /// Smaller ones, each once wrong.
    @Test func smallerHoles() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, ["-d", "pattern", "-r", "64x48", "-n", "3", "-o", dir.file("out/{seq}.jpg")]).status == 0)
        let db = ["--db", dir.file("c.sqlite3")]

        // A global option before the command.
        let list = try CamrollBinary.run(["--json", "list"] + db)
        #expect(list.status == 0 && list.stdout.hasPrefix("[{"), "\(list.stderr)")
        // Conflicts are said, not resolved silently.
        #expect(try CamrollBinary.run(["list", "--json", "--csv"] + db).stderr.contains("cannot be used together"))
        #expect(try CamrollBinary.run(["--quiet", "--json", "-d", "pattern"] + db).status == 64)
        let two = try CamrollBinary.run(["delete", "--save", "2", "--run", "1"] + db)
        #expect(two.status == 64 && two.stderr.contains("give only one of --save, --capture and --run"))
        // --db naming a directory.
        let directory = try CamrollBinary.run(["-d", "pattern", "-o", dir.file("y.jpg"), "--db", dir.path])
        #expect(directory.status == 73 && directory.stderr.contains("is a directory"), "\(directory.stderr)")

        // Files already missing are not counted as deleted.
        try FileManager.default.removeItem(atPath: dir.file("out/2.jpg"))
        let delete = try CamrollBinary.run(["delete", "--run", "1"] + db)
        #expect(delete.status == 0)
        #expect(delete.stdout.contains("deleted 2 file(s)") && delete.stdout.contains("1 were already missing"), "\(delete.stdout)")

        // `~/` is the home directory, as a shell would expand it.
        let home = try TemporaryDirectory()
        let literalTilde = FileManager.default.currentDirectoryPath + "/~"
        let tildeExisted = FileManager.default.fileExists(atPath: literalTilde)
        let tilde = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-o", "~/t.jpg"] + db, environment: ["HOME": home.path])
        #expect(tilde.status == 0 && FileManager.default.fileExists(atPath: home.file("t.jpg")), "\(tilde.stderr)")
        #expect(tildeExisted || !FileManager.default.fileExists(atPath: literalTilde))

        // xdg-user-dirs' pictures directory, from $XDG_CONFIG_HOME/user-dirs.dirs.
        try FileManager.default.createDirectory(atPath: home.file("config"), withIntermediateDirectories: true)
        try Data("# written by xdg-user-dirs-update\nXDG_PICTURES_DIR=\"$HOME/Bilder\"\n".utf8)
            .write(to: URL(fileURLWithPath: home.file("config/user-dirs.dirs")))
        let xdg = try CamrollBinary.run(
            ["-d", "pattern", "-r", "64x48"] + db, environment: ["HOME": home.path, "XDG_CONFIG_HOME": home.file("config"), "XDG_PICTURES_DIR": ""])
        #expect(xdg.status == 0, "\(xdg.stderr)")
        #expect(home.files(in: "Bilder/camroll", suffix: ".jpg").count == 1)

        // An empty HOME is no home: never /Pictures.
        #expect(try UserDirectories.home(environment: ["HOME": ""]) != "")
        #expect(try UserDirectories.pictures(environment: ["HOME": ""]) != "/Pictures")
        #expect(try UserDirectories.expandingTilde("~/a/b.jpg", environment: ["HOME": "/h"]) == "/h/a/b.jpg")
    }

    /// Catalog-wide stats once divided by the wall time from the first run to the last.
    @Test func statsCountsOnlyTheRunsOwnTime() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, ["-d", "pattern", "-r", "64x48", "-n", "50", "-o", dir.file("a/{seq}.jpg")]).status == 0)
        let database = try Database(path: dir.file("c.sqlite3"))
        // A second run a day later.
        #expect(try snap(dir, ["-d", "pattern", "-r", "64x48", "-n", "50", "-o", dir.file("b/{seq}.jpg")]).status == 0)
        try database.execute("UPDATE saves SET saved_at = strftime('%Y-%m-%dT%H:%M:%fZ', saved_at, '+1 day') WHERE capture_id = 2")
        let stats = try CamrollBinary.run(["stats", "--json", "--db", dir.file("c.sqlite3")])
        let object = try #require(JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
        let rate = try #require(object["saves_per_s"] as? Double)
        #expect(rate > 100, "100 saves over a day's gap: \(rate)/s")
    }

    /// A live progress line longer than the terminal once wrapped, a new line every redraw.
    @Test func theLiveProgressLineFitsANarrowTerminal() throws {
        let dir = try TemporaryDirectory()
        let command = "stty cols 40; \(CamrollBinary.path) -d pattern -r 320x240 -n 3000 -o \(dir.file("{seq}.jpg")) --db \(dir.file("c.sqlite3"))"
        let result = try CamrollBinary.runProgram(["/usr/bin/script", "-qfec", command, "/dev/null"])
        #expect(result.status == 0)
        let redraws = result.stdout.components(separatedBy: "\r\u{1B}[2K").dropFirst()
        #expect(!redraws.isEmpty)
        for redraw in redraws.dropLast() {
            #expect(redraw.count < 40, "\(redraw.count) columns: \(redraw)")
        }
    }
}

extension HardeningTests {
    /// A catalog edited by hand or damaged, with sizes and durations no save can have: the
    /// reading commands once trapped (SIGILL) summing them. Now every command finishes with its
    /// own status, and stats reads the values as within what a save can be.
    @Test(arguments: [
        "UPDATE saves SET duration_us = 9223372036854775807, bytes = 9223372036854775807",
        "UPDATE saves SET duration_us = -9223372036854775808, bytes = -9223372036854775808",
        "UPDATE saves SET duration_us = 'abc', bytes = x'00ff', job = 9223372036854775807",
    ])
    func impossibleValuesInTheCatalogAreNoTrap(_ edit: String) throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, ["-d", "pattern", "-r", "64x48", "-n", "4", "--jobs", "2", "-o", dir.file("{seq}.jpg")]).status == 0)
        let catalog = try Database(path: dir.file("c.sqlite3"))
        try catalog.execute(edit)
        let commands: [([String], Int32)] = [
            (["stats"], 0), (["stats", "--json"], 0), (["stats", "--plot", dir.file("p.svg")], 0), (["list"], 0),
            (["list", "--run", "1"], 0), (["show", "1"], 0), (["verify"], 1), (["delete", "--run", "1", "--force"], 0),
        ]
        for (arguments, status) in commands {
            let result = try CamrollBinary.run(arguments + ["--db", dir.file("c.sqlite3")])
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("error"), "\(arguments): \(result.stderr)")
        }
    }
}

extension HardeningTests {
    /// Output that could not be written is not a success: `camroll list --json > out.json` on a
    /// full disk once ended with status 0 and half a file. A reader that goes away (`| head`)
    /// is its own choice, as for other tools: no error then.
    @Test func outputThatCannotBeWrittenIsExit74() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, ["-d", "pattern", "-r", "64x48", "-n", "3", "-o", dir.file("{seq}.jpg")]).status == 0)
        let toFullDisk = ["/bin/sh", "-c", "exec \"$0\" \"$@\" > /dev/full"]
        for arguments in [["list", "--json"], ["stats"], ["verify"], ["--version"]] {
            let result = try CamrollBinary.run(arguments + (arguments == ["--version"] ? [] : ["--db", dir.file("c.sqlite3")]),
                                               prefix: toFullDisk)
            #expect(result.status == 74, "\(arguments): \(result.stderr)")
            #expect(result.stderr == "camroll: error: cannot write the output: No space left on device\n", "\(arguments)")
        }
        // A snap whose events cannot be written still saves (and records) its photos.
        let snapped = try CamrollBinary.run(
            ["snap", "-d", "pattern", "-r", "64x48", "-n", "2", "-o", dir.file("j{seq}.jpg"), "--json", "--db", dir.file("c.sqlite3")],
            prefix: toFullDisk)
        #expect(snapped.status == 74, "\(snapped.stderr)")
        #expect(try CatalogReader(dir.file("c.sqlite3")).int("SELECT count(*) FROM saves WHERE path LIKE '%/j%'") == 2)
        // The reader closing the pipe early is not an error: 3000 rows are more than a pipe holds.
        #expect(try snap(dir, ["-d", "pattern", "-r", "16x16", "-n", "3000", "-o", dir.file("many/{seq}.jpg"), "--quiet"]).status == 0)
        let closed = try CamrollBinary.runProgram(
            ["/bin/bash", "-c", "set -o pipefail; \"$0\" list --run 3 --db \"$1\" | head -c 1 >/dev/null", CamrollBinary.path,
             dir.file("c.sqlite3")])
        #expect(closed.status == 0 && closed.stderr.isEmpty, "\(closed.stderr)")
    }
}

extension HardeningTests {
    /// A catalog whose version is camroll's but whose tables are not (changed by hand, another
    /// program's file): exit 65 with what is missing, as for any input that is not what it says.
    @Test func aCatalogWithoutCamrollsTablesIsExit65() throws {
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.file("c.sqlite3"))
        try database.execute("CREATE TABLE runs(id INTEGER PRIMARY KEY); PRAGMA user_version = \(Catalog.schemaVersion)")
        for arguments in [["list"], ["stats"], ["verify"], ["snap", "-d", "pattern", "-r", "64x48", "-o", dir.file("a.jpg")]] {
            let result = try CamrollBinary.run(arguments + ["--db", dir.file("c.sqlite3")])
            #expect(result.status == 65, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("camroll: error: catalog \(dir.file("c.sqlite3")) does not have camroll's tables: "),
                    "\(arguments): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("a.jpg")))
    }
}

extension HardeningTests {
    /// A run cut short (SIGKILL, or a catalog on the disk it filled) and not yet repaired: the
    /// files it saved last may have no row, so verify once said "0 files, all ok", exit 0, of a
    /// fill whose every row was lost with the catalog's disk. Now it names the run, exit 1,
    /// until --repair has closed it.
    @Test func verifyNamesARunThatWasCutShort() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, ["-d", "pattern", "-r", "64x48", "-n", "3", "-o", dir.file("{seq}.jpg")]).status == 0)
        // What a killed run leaves: its row still `running`, its lock free (the process is gone).
        try Database(path: dir.file("c.sqlite3")).execute("UPDATE runs SET status = 'running', finished_at = NULL")
        for arguments in [["verify"], ["verify", "--run", "1"]] {
            let result = try snap(dir, arguments)
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            #expect(result.stdout.contains("interrupted: run 1 did not finish"), "\(arguments): \(result.stdout)")
        }
        let json = try snap(dir, ["verify", "--json"])
        #expect(json.status == 1 && json.stdout.contains("\"interrupted_runs\":[1]"), "\(json.stdout)")
        // Asked about files only, verify answers about those.
        #expect(try snap(dir, ["verify", dir.file("1.jpg")]).status == 0)
        let repaired = try snap(dir, ["verify", "--repair"])
        #expect(repaired.status == 0 && repaired.stdout.contains("1 interrupted run(s) closed"), "\(repaired.stdout)")
        let after = try snap(dir, ["verify"])
        #expect(after.status == 0 && !after.stdout.contains("interrupted"), "\(after.stdout)")
    }
}

extension HardeningTests {
    /// A name that is not UTF-8 was changed on its way in (its bytes became U+FFFD): the photo
    /// was saved under another name than the one given. Now a usage error that shows the bytes.
    @Test func anArgumentThatIsNotUTF8IsRefused() throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.runProgram(
            ["/bin/bash", "-c", "exec \"$0\" snap -d pattern -r 64x48 -o \"$1/$(printf '\\377')-{seq}.jpg\" --db \"$1/c.sqlite3\"",
             CamrollBinary.path, dir.path])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("camroll: error: argument 7 is not UTF-8: '\(dir.path)/\\xFF-{seq}.jpg'\n"), "\(result.stderr)")
        #expect(dir.files(in: ".", suffix: ".jpg").isEmpty)
        // UTF-8 names beyond ASCII are names like any other.
        let named = try snap(dir, ["-d", "pattern", "-r", "64x48", "-o", dir.file("héllo-日本-{seq}.jpg")])
        #expect(named.status == 0 && FileManager.default.fileExists(atPath: dir.file("héllo-日本-1.jpg")), "\(named.stderr)")
    }
}

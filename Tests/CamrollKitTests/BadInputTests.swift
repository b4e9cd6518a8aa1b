@testable import CamrollKit
import Foundation
import Testing

/// Every bad input gets one `camroll: error:` line (plus perhaps a hint) and its own exit status.
@Suite struct BadInputTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var arguments: [String]
        var status: Int32
        var message: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let cases: [Case] = [
        Case(arguments: ["-n", "0"], status: 64, message: "invalid value '0' for '-n'"),
        Case(arguments: ["-n", "-3"], status: 64, message: "invalid value '-3' for '-n'"),
        Case(arguments: ["--count", "many"], status: 64, message: "expected a whole number"),
        Case(arguments: ["-n", "1000000001"], status: 64, message: "must be from 1 to 1000000000"),
        Case(arguments: ["--fps", "0.0004"], status: 64, message: "expected a rate from 0.001 to 1000"),
        // Too long for an Int, but a whole number all the same.
        Case(arguments: ["-n", "99999999999999999999"], status: 64, message: "invalid value '99999999999999999999' for '-n': must be from 1 to 1000000000"),
        Case(arguments: ["-n", "-99999999999999999999"], status: 64, message: "must be from 1 to 1000000000"),
        Case(arguments: ["-n", "9x"], status: 64, message: "invalid value '9x' for '-n': expected a whole number"),
        Case(arguments: ["-n"], status: 64, message: "missing value for '-n'"),
        Case(arguments: ["--bogus"], status: 64, message: "unknown option '--bogus'"),
        Case(arguments: ["stray"], status: 64, message: "unknown command 'stray'"),
        Case(arguments: ["snap", "stray"], status: 64, message: "unexpected argument 'stray'"),
        Case(arguments: ["--db", "/tmp/c.sqlite3", "list"], status: 64, message: "'list' is a command: it comes before the options"),
        Case(arguments: ["-r", "640"], status: 64, message: "invalid resolution '640'"),
        Case(arguments: ["-r", "641x480"], status: 64, message: "the width must be even"),
        Case(arguments: ["-r", "65536x480"], status: 64, message: "invalid resolution '65536x480': width and height must be from 1 to 16384"),
        Case(arguments: ["--subsampling", "411"], status: 64, message: "invalid value '411' for '--subsampling': expected 444, 422 or 420"),
        Case(arguments: ["--subsampling", "444", "-o", "@/p.png"], status: 64, message: "'--subsampling 444' is for JPEG output"),
        Case(arguments: ["-q", "0"], status: 64, message: "invalid value '0' for '-q'"),
        Case(arguments: ["-q", "101"], status: 64, message: "must be from 1 to 100"),
        Case(arguments: ["--interval", "soon"], status: 64, message: "invalid duration 'soon'"),
        Case(arguments: ["--timeout", "0"], status: 64, message: "'--timeout' must be above 0"),
        Case(arguments: ["--color", "purple"], status: 64, message: "invalid value 'purple' for '--color'"),
        Case(arguments: ["--fsync=yes"], status: 64, message: "'--fsync' takes no value"),
        Case(arguments: ["-f", "nv12"], status: 64, message: "the test pattern is YUYV or MJPEG"),
        Case(arguments: ["-n", "3", "-o", "@/same.jpg"], status: 64, message: "gives every save the same name"),
        Case(arguments: ["-o", "@/{nope}.jpg"], status: 64, message: "unknown token '{nope}'"),
        Case(arguments: ["-o", "@/{seq.jpg"], status: 64, message: "without a closing '}'"),
        Case(arguments: ["-o", "@/out/"], status: 64, message: "names a directory, not a file"),
        Case(arguments: ["-n", "100000", "--frames", "100000"], status: 64, message: "must be at most 1000000000"),
        Case(arguments: ["-d", "file:@/missing.jpg"], status: 66, message: "no such file"),
        Case(arguments: ["-d", "file:@/text.txt"], status: 65, message: "is not a JPEG or PNG file"),
        Case(arguments: ["-d", "file:@/broken.jpg"], status: 65, message: "is not a valid JPEG"),
        Case(arguments: ["-d", "file:@"], status: 65, message: "is not a regular file"),
        Case(arguments: ["--db", "@/text.txt"], status: 65, message: "is not an SQLite catalog"),
        Case(arguments: ["--db", "@/text.txt/c.sqlite3"], status: 73, message: "cannot create the catalog's directory"),
        Case(arguments: ["-o", "@/text.txt/sub/{seq}.jpg"], status: 73, message: "cannot create directory"),
        Case(arguments: ["-o", "@/existing.jpg"], status: 73, message: "already exists"),
        Case(arguments: ["-d", "/dev/video99"], status: 66, message: "no such device: /dev/video99"),
        Case(arguments: ["-d", "/dev/null"], status: 66, message: "/dev/null is not a camera"),
        Case(arguments: ["-d", "pattern", "--set", "brightness=1"], status: 64, message: "'--set' controls a camera"),
        Case(arguments: ["--set", "brightness"], status: 64, message: "expected NAME=VALUE"),
        // Found by the hardening passes.
        Case(arguments: ["--json", "--quiet"], status: 64, message: "'--json' and '--quiet' cannot be used together"),
        Case(arguments: ["--max-pixels", "0"], status: 64, message: "invalid value '0' for '--max-pixels'"),
        Case(arguments: ["-d", "file:@/huge.jpg"], status: 65, message: "60000x60000 (3600 megapixels), over the limit of 100 megapixels"),
        Case(arguments: ["--db", "@"], status: 73, message: "is a directory"),
        Case(arguments: ["-o", "~nobody/x.jpg"], status: 64, message: "'~user' paths are not expanded"),
        Case(arguments: ["-o", "@/" + String(repeating: "x", count: 256)], status: 73, message: "File name too long"),
        // Found by a sweep of random option values: an empty --db was the working directory,
        // and a directory where the file should go was "already exists, use --overwrite".
        Case(arguments: ["--db", ""], status: 64, message: "invalid value '' for '--db': expected a path"),
        Case(arguments: ["-d", "file:@/huge.jpg", "--max-pixels", "1000"], status: 65,
             message: "60000x60000 (3600 megapixels), over the limit of 1000 pixels"),
        Case(arguments: ["-o", "/proc/x.jpg"], status: 73, message: "cannot save /proc/x.jpg: cannot create a file in /proc: "),
        Case(arguments: ["-o", "@"], status: 64, message: "names a directory, not a file"),
        Case(arguments: ["-o", "@/{seq}.jpg"], status: 73, message: "cannot save @/1.jpg: a directory has that name"),
        Case(arguments: ["-o", "@/{seq}.jpg", "--overwrite"], status: 73, message: "cannot save @/1.jpg: a directory has that name"),
        // A line break or an escape sequence in a template made names that break every listing.
        Case(arguments: ["-o", "@/a\nb{seq}.jpg"], status: 64, message: "output template '@/a\\nb{seq}.jpg' has a control character"),
        Case(arguments: ["-o", "@/\u{1B}[31m{seq}.jpg"], status: 64, message: "output template '@/\\e[31m{seq}.jpg' has a control character"),
    ]

    @Test(arguments: cases)
    func badInputIsAClearErrorWithItsStatus(_ testCase: Case) throws {
        let dir = try TemporaryDirectory()
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: dir.file("text.txt")))
        try Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 0x4A, 0x46, 0x49, 0x46]).write(to: URL(fileURLWithPath: dir.file("broken.jpg")))
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: dir.file("existing.jpg")))
        try Data(jpegClaiming(width: 60000, height: 60000)).write(to: URL(fileURLWithPath: dir.file("huge.jpg")))
        try FileManager.default.createDirectory(atPath: dir.file("1.jpg"), withIntermediateDirectories: false)

        // Defaults for what the case does not give itself (an option given twice is an error).
        let given = testCase.arguments.map { $0.replacingOccurrences(of: "@", with: dir.path) }
        var defaults: [String] = []
        for (names, value) in [(["-d", "--device"], "pattern"), (["-o", "--output"], dir.file("shots/{seq}.jpg")),
                               (["--db"], dir.file("c.sqlite3"))]
        where !given.contains(where: { word in names.contains(word) || names.contains { word.hasPrefix($0 + "=") } }) {
            defaults += [names[0], value]
        }
        let arguments = given.first?.hasPrefix("-") == true ? defaults + given : given + defaults

        let result = try CamrollBinary.run(arguments)
        #expect(result.status == testCase.status, "stderr: \(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.first?.hasPrefix("camroll: error: ") == true, "stderr: \(result.stderr)")
        #expect(lines.first?.contains(testCase.message.replacingOccurrences(of: "@", with: dir.path)) == true,
                "stderr: \(result.stderr)")
        #expect(lines.count <= 2, "one error line and at most one hint: \(result.stderr)")
        #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Backtrac"))
        // Nothing the user had is touched.
        #expect(try String(contentsOfFile: dir.file("existing.jpg"), encoding: .utf8) == "keep me")
        #expect(dir.files(in: "shots").isEmpty)
    }

    /// The catalog commands read the catalog: a directory in its place is "no catalog" (66), not
    /// SQLite's "disk I/O error" (74), and an empty path is a usage error.
    @Test func theCatalogCommandsSayWhenTheCatalogIsADirectory() throws {
        let dir = try TemporaryDirectory()
        for command in ["list", "show", "verify", "stats", "delete"] {
            var arguments = [command, "--db", dir.path]
            if command == "show" { arguments.append("1") }
            if command == "delete" { arguments += ["--run", "1"] }
            let result = try CamrollBinary.run(arguments)
            #expect(result.status == 66, "\(command): \(result.stderr)")
            #expect(result.stderr.hasPrefix("camroll: error: catalog \(dir.path) is a directory\n"), "\(command): \(result.stderr)")
            let empty = try CamrollBinary.run([command, "--db", ""])
            if command == "verify" {
                let emptyPath = try CamrollBinary.run(["verify", "", "--db", dir.file("c.sqlite3")])
                #expect(emptyPath.status == 64 && emptyPath.stderr.hasPrefix("camroll: error: one of the paths is empty"), "\(emptyPath.stderr)")
            }
            #expect(empty.status == 64 && empty.stderr.hasPrefix("camroll: error: invalid value '' for '--db'"),
                    "\(command): \(empty.stderr)")
        }
    }

    /// A catalog path that names a FIFO or a device: said so at once (on a FIFO, SQLite waited
    /// for a writer for ever: `list` and `verify` hung; on /dev/null it said "disk I/O error").
    @Test func aCatalogThatIsAFIFOOrADeviceIsNamedAsSuch() throws {
        let dir = try TemporaryDirectory()
        #expect(mkfifo(dir.file("fifo.sqlite3"), 0o600) == 0)
        for (path, kind) in [(dir.file("fifo.sqlite3"), "a FIFO"), ("/dev/null", "a device")] {
            for (command, status) in [(["list"], Int32(66)), (["verify"], 66), (["stats"], 66), (["show", "last"], 66),
                                      (["snap", "-d", "pattern", "-r", "64x48", "-o", dir.file("out/{seq}.jpg")], 73)] {
                // timeout(1): a command that waits for ever fails the test instead of hanging it.
                let result = try CamrollBinary.run(command + ["--db", path], prefix: ["/usr/bin/timeout", "10"])
                #expect(result.status == status, "\(command) --db \(path): \(result.status) \(result.stderr)")
                #expect(result.stderr.hasPrefix("camroll: error: catalog \(path) is \(kind), not a file\n"), "\(result.stderr)")
            }
        }
        #expect(dir.files(in: "out").isEmpty)
    }

    /// `--db` naming another program's SQLite database (a browser's history, say): every command
    /// says so and the file is left byte for byte as it was, still not in WAL mode. (Before,
    /// `snap` added camroll's tables to it and switched it to WAL.) Also where that program
    /// keeps a schema version of its own.
    @Test func theDatabaseOfAnotherProgramIsLeftAsItWas() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("places.sqlite")
        for version in [0, 3] {
            try? FileManager.default.removeItem(atPath: path)
            try Database(path: path).execute(
                "CREATE TABLE bookmarks(id INTEGER PRIMARY KEY, url TEXT); INSERT INTO bookmarks(url) VALUES ('https://example.org'); PRAGMA user_version=\(version)")
            let before = try fileBytes(path)
            for command in [["snap", "-d", "pattern", "-r", "64x48", "-o", dir.file("out/{seq}.jpg")], ["list"], ["verify"], ["stats"]] {
                let result = try CamrollBinary.run(command + ["--db", path])
                #expect(result.status == 65, "\(command): \(result.status) \(result.stderr)")
                #expect(result.stderr.hasPrefix("camroll: error: \(path) is the database of something else, not a camroll catalog (its tables: bookmarks)\n"),
                        "\(result.stderr)")
            }
            #expect(try fileBytes(path) == before)
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
            #expect(dir.files(in: "out").isEmpty)
        }
    }

    /// A database with no tables at all — what a power cut can leave of a catalog made just
    /// before it — is not a catalog to the commands that only read or repair one: `verify
    /// --repair` and `delete` say so (65) as `verify` does, and add no tables. (Before, repair
    /// made it a new, empty catalog and passed: "verified 0 files", exit 0, whatever was on disk.)
    /// `snap` still makes a catalog of it.
    @Test func anEmptyDatabaseIsNotRepairedIntoACatalog() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("c.sqlite3")
        try Database(path: path).execute("CREATE TABLE t(x); DROP TABLE t")
        for command in [["verify"], ["verify", "--repair"], ["delete", "--run", "1"], ["list"]] {
            let result = try CamrollBinary.run(command + ["--db", path])
            #expect(result.status == 65 && result.stderr.hasPrefix("camroll: error: \(path) is not a camroll catalog (it has no camroll tables)\n"),
                    "\(command): \(result.status) \(result.stderr)")
        }
        #expect(try CatalogReader(path).int("SELECT count(*) FROM sqlite_master") == 0)
        // What a camroll that could not write a new catalog (a full disk) leaves: said to be empty.
        #expect(FileManager.default.createFile(atPath: dir.file("empty.sqlite3"), contents: nil))
        let empty = try CamrollBinary.run(["verify", "--db", dir.file("empty.sqlite3")])
        #expect(empty.status == 65 && empty.stderr.hasPrefix("camroll: error: \(dir.file("empty.sqlite3")) is not a camroll catalog (it is empty: 0 bytes)\n"),
                "\(empty.stderr)")
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-o", dir.file("out/{seq}.jpg"), "--db", path]).status == 0)
        #expect(try CamrollBinary.run(["verify", "--repair", "--db", path]).status == 0)
    }

    /// `-o` naming the catalog or a file beside it, with `--overwrite`, under that name or
    /// another (a hard link): exit 73, and the catalog keeps every record. (Before, the photo
    /// replaced the catalog: every run it recorded was gone.)
    @Test func noSaveReplacesTheCatalogOrItsFiles() throws {
        let dir = try TemporaryDirectory()
        let catalog = dir.file("c.sqlite3")
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-o", dir.file("first.jpg"), "--db", catalog]).status == 0)
        #expect(link(catalog, dir.file("alias.jpg")) == 0)
        for (name, what) in [("c.sqlite3", "the catalog \(catalog)"), ("c.sqlite3-wal", "the catalog's write-ahead log \(catalog)-wal"),
                             ("c.sqlite3.runs-lock", "the catalog's lock file \(catalog).runs-lock"),
                             ("alias.jpg", "the catalog \(catalog)")] {
            for jobs in ["1", "2"] {
                let result = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-o", dir.file(name), "--overwrite", "--jobs", jobs,
                                                    "--db", catalog])
                #expect(result.status == 73 && result.stderr.hasPrefix("camroll: error: cannot save \(dir.file(name)): it is \(what)\n"),
                        "\(name): \(result.status) \(result.stderr)")
            }
        }
        let list = try CamrollBinary.run(["list", "--run", "1", "--db", catalog])
        #expect(list.status == 0 && list.stdout.contains(dir.file("first.jpg")), "\(list.stderr)")
        #expect(try CamrollBinary.run(["verify", "--db", catalog]).status == 0)
    }

    /// `-o` naming a device, a FIFO or a socket, with `--overwrite` or without: exit 73, and the
    /// node is still there, as it was. (Before, `--overwrite` replaced it with the photo: as
    /// root, `-o /dev/null --overwrite` would have left a JPEG for /dev/null.)
    @Test func noSaveReplacesADeviceAFIFOOrASocket() throws {
        let dir = try TemporaryDirectory()
        #expect(mkfifo(dir.file("fifo"), 0o600) == 0)
        let socket = try CamrollBinary.runProgram(
            ["/usr/bin/python3", "-c", "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", dir.file("socket")])
        #expect(socket.status == 0)
        var nodes = [("fifo", "a FIFO", S_IFIFO), ("socket", "a socket", S_IFSOCK)]
        if getuid() == 0 {  // mknod needs root: /dev/null's own numbers, 1:3 (glibc's makedev, a macro)
            #expect(mknod(dir.file("null"), S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0)
            nodes.append(("null", "a character device", S_IFCHR))
        }
        for (name, kind, type) in nodes {
            for overwrite in [["--overwrite"], []] {
                let result = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-o", dir.file(name), "--db", dir.file("c.sqlite3")] + overwrite)
                #expect(result.status == 73 && result.stderr.hasPrefix("camroll: error: cannot save \(dir.file(name)): it is \(kind), and photos replace only files\n"),
                        "\(name) \(overwrite): \(result.status) \(result.stderr)")
                var status = stat()
                #expect(lstat(dir.file(name), &status) == 0 && status.st_mode & S_IFMT == type, "\(name) was replaced")
            }
        }
    }

    /// This machine has no camera: each command says so, and what to do instead.
    @Test func withoutACameraEachCommandSaysSo() throws {
        guard DeviceList.videoNodes().isEmpty else { return }  // a machine with cameras: not this test
        let dir = try TemporaryDirectory()
        let snap = try CamrollBinary.run(["snap", "-o", dir.file("{seq}.jpg"), "--db", dir.file("c.sqlite3")])
        #expect(snap.status == 69)
        #expect(snap.stderr == "camroll: error: no camera found\nUse '-d pattern' for the built-in test pattern, or '-d file:PHOTO.jpg' for an image file.\n")
        let devices = try CamrollBinary.run(["devices"])
        #expect(devices.status == 0 && devices.stdout == "no cameras found\n")
        let json = try CamrollBinary.run(["devices", "--json"])
        #expect(json.stdout == "[]\n")
        let check = try CamrollBinary.run(["check", "-d", "/dev/null"])
        #expect(check.status == 66 && check.stderr.hasPrefix("camroll: error: /dev/null is not a camera"))
        let formats = try CamrollBinary.run(["formats"])
        #expect(formats.status == 69 && formats.stderr.hasPrefix("camroll: error: no camera found"))
    }

    /// open(2) of a node that is there but has nothing behind it (ENXIO: /dev/tty without a
    /// terminal; ENODEV) names the node for what it is, not as missing with a list of cameras.
    @Test func aNodeWithNothingBehindItIsNotCalledMissing() throws {
        for code in [ENXIO, ENODEV] {
            let error = AccessCheck.openError(path: "/dev/null", errno: code)
            #expect(error.exitCode == .noInput && error.message == "/dev/null is not a camera (not a V4L2 device)")
        }
        let missing = AccessCheck.openError(path: "/dev/video99", errno: ENXIO)
        #expect(missing.message == "no such device: /dev/video99")
        // Linux's device numbers: the major's low 12 bits at bits 8-19, the rest from bit 44;
        // the minor's low 8 bits at 0-7, the rest at 20-43.
        #expect(AccessCheck.characterDeviceMajor(dev_t(81 << 8 | 5)) == 81)
        #expect(AccessCheck.characterDeviceMajor(dev_t(0x12000) << 32 | dev_t(0xabcde) << 20 | dev_t(0x345) << 8 | 0xff) == 0x12345)
        var null = stat()
        #expect(stat("/dev/null", &null) == 0 && AccessCheck.characterDeviceMajor(null.st_rdev) == 1)
    }

    @Test func anUnwritableDirectoryIsExit73() throws {
        let dir = try TemporaryDirectory()
        let locked = dir.file("locked")
        try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: locked)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: dir.path)
        // Root may write anywhere: run as 'nobody' then, which is how a user meets this error.
        let prefix = getuid() == 0 ? HostileFileTests.asNobody : []
        let result = try CamrollBinary.run(
            ["-d", "pattern", "-r", "64x48", "-o", locked + "/{seq}.jpg", "--db", dir.file("c.sqlite3")], prefix: prefix)
        #expect(result.status == 73, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("camroll: error: cannot write to directory \(locked)"))
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.text("SELECT status FROM runs") == "failed")
        #expect(try catalog.text("SELECT error FROM runs")?.contains("cannot write to directory") == true)
    }

    @Test func aLockedCatalogIsExit69() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("c.sqlite3")
        let holder = try catalogHeldByAnotherWriter(path)
        let result = try CamrollBinary.run(
            ["-d", "pattern", "-r", "64x48", "-o", dir.file("{seq}.jpg"), "--db", path])
        try holder.execute("ROLLBACK")
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.contains("is locked by another process"))
        #expect(dir.files(in: ".", suffix: ".jpg").isEmpty)
    }
}

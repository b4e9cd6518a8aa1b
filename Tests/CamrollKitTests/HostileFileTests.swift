@testable import CamrollKit
import Foundation
import Testing

/// Hostile files and racing processes: planted links, FIFOs, odd timestamps, catalogs deleted,
/// locked, corrupt or read-only, writers that repair must not mistake for dead ones.
@Suite(.serialized) struct HostileFileTests {
    static let asNobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

    /// A user who can write the output directory once made root's camroll overwrite any file
    /// by planting a link at the predictable temporary name. Now the name cannot be predicted,
    /// and a link at any name is never followed.
    @Test(.enabled(if: getuid() == 0, "planting links as another user for a root process needs root"))
    func aPlantedSymlinkIsNeverWrittenThrough() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path)
        try Data("secret\n".utf8).write(to: URL(fileURLWithPath: dir.file("victim")))
        // The attacker ('nobody') owns the output directory (not sticky: the kernel's
        // protected_symlinks would not help) and plants, in one process, links for every pid the
        // next processes may get, at the old predictable temporary name.
        let out = dir.file("out")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        #expect(chown(out, 65534, 65534) == 0)
        let lastPid = try String(contentsOfFile: "/proc/sys/kernel/ns_last_pid", encoding: .utf8)
        let nextPid = try #require(Int(lastPid.trimmingCharacters(in: .whitespacesAndNewlines))) + 1
        let plant = "import os\nfor pid in range(\(nextPid), \(nextPid + 3000)):\n"
            + "    os.symlink('\(dir.file("victim"))', '\(out)/.1.jpg.camroll-%d.tmp' % pid)\n"
        let planted = try CamrollBinary.runProgram(Self.asNobody + ["/usr/bin/python3", "-c", plant])
        #expect(planted.status == 0, "\(planted.stderr)")
        for _ in 0..<20 {
            let result = try CamrollBinary.run(["snap", "-d", "pattern", "-r", "64x48", "-o", out + "/1.jpg", "--overwrite",
                                                "--db", dir.file("c.db")])
            #expect(result.status == 0, "\(result.stderr)")
        }
        #expect(try String(contentsOfFile: dir.file("victim"), encoding: .utf8) == "secret\n")
        #expect(try JPEGDecoder().header(of: fileBytes(out + "/1.jpg")).width == 64)
    }

    /// A working directory removed after the shell entered it: a relative `-o`, `--db` or
    /// `file:` was resolved against "/" (`-o a.jpg` saved /a.jpg, `--db c.db` made /c.db).
    @Test func aRelativePathWithTheWorkingDirectoryGoneIsAnError() throws {
        let dir = try TemporaryDirectory()
        let gone = dir.file("gone")
        let unique = UUID().uuidString
        let cases: [([String], Int32, String)] = [
            (["-d", "pattern", "-r", "64x48", "-o", "a-\(unique).jpg", "--db", dir.file("c.sqlite3")], 73, "a-\(unique).jpg"),
            (["-d", "pattern", "-r", "64x48", "-o", dir.file("b.jpg"), "--db", "c-\(unique).sqlite3"], 73, "c-\(unique).sqlite3"),
            (["-d", "file:p-\(unique).jpg", "-o", dir.file("c.jpg"), "--db", dir.file("c.sqlite3")], 66, "p-\(unique).jpg"),
            (["list", "--db", "c-\(unique).sqlite3"], 66, "c-\(unique).sqlite3"),
        ]
        for (arguments, status, name) in cases {
            try FileManager.default.createDirectory(atPath: gone, withIntermediateDirectories: false)
            let result = try CamrollBinary.runProgram(
                ["/bin/sh", "-c", "cd \"$0\" && rmdir \"$0\" && exec \"$@\"", gone, CamrollBinary.path] + arguments)
            #expect(result.status == status && result.stderr.hasPrefix(
                "camroll: error: cannot tell where '\(name)' is: the working directory was removed\n"), "\(arguments): \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: "/" + name), "\(arguments) wrote /\(name)")
            for suffix in ["", "-wal", "-shm", ".runs-lock"] { try? FileManager.default.removeItem(atPath: "/" + name + suffix) }
        }
        #expect(dir.files(in: ".", suffix: ".jpg").isEmpty)
    }

    /// The output directory removed while a run saves into it (`rm -r` of the output, a
    /// folder deleted from a share) once ended with "rename: No such file or directory".
    @Test func anOutputDirectoryRemovedMidRunIsSaidSo() throws {
        let dir = try TemporaryDirectory()
        let out = dir.file("out")
        let errors = Pipe()
        let (process, events) = try CamrollBinary.startSaving(
            ["-d", "pattern", "-r", "160x120", "--frames", "100000", "--interval", "5ms", "--json", "-o", out + "/{seq}.jpg",
             "--db", dir.file("c.sqlite3")], errors: errors)
        usleep(100_000)
        // `rm -r`, again until it wins the race with the next save.
        let removal = try CamrollBinary.runProgram(
            ["/usr/bin/timeout", "20", "/bin/sh", "-c", "while [ -d '\(out)' ]; do rm -rf '\(out)' 2>/dev/null; done"])
        if removal.status != 0 { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        _ = events.fileHandleForReading.readDataToEndOfFile()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 73, "\(stderr)")
        #expect(stderr.hasPrefix("camroll: error: cannot save \(out)/") && stderr.contains(": its directory \(out) was removed while the run saved into it\n"),
                "\(stderr)")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.text("SELECT status FROM runs") == "failed")
        let verify = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
        #expect(verify.status == 1 && verify.stdout.contains("directories that are gone (\(out))"), "\(verify.stdout)")
    }

    /// SQLite's WAL index (`-shm`), which it maps into memory, taken away under a run: the next
    /// commit touches a page that is no longer there, and the kernel sends SIGBUS — as a full
    /// btrfs does (see StorageTests). A one-line error naming the file, exit 74, and how to
    /// repair; not a crash. Repair then records what the run saved.
    @Test func aCatalogIndexTakenAwayUnderARunIsAnErrorNotACrash() throws {
        let dir = try TemporaryDirectory()
        let catalog = dir.file("c.sqlite3")
        let errors = Pipe()
        let (process, events) = try CamrollBinary.startSaving(
            ["-d", "pattern", "-r", "160x120", "--frames", "100000", "--interval", "5ms", "--json", "-o", dir.file("out/{seq}.jpg"),
             "--db", catalog], errors: errors)
        usleep(200_000)
        #expect(truncate(catalog + "-shm", 0) == 0)
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        _ = events.fileHandleForReading.readDataToEndOfFile()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationReason == .exit && process.terminationStatus == 74, "\(process.terminationStatus) \(stderr)")
        #expect(stderr == "camroll: error: cannot use \(catalog)-shm (mapped into memory, SIGBUS): its file system is full, "
                + "or its device gone\nMake room, then run 'camroll verify --repair --db \(catalog)': it records the files saved last.\n",
                "\(stderr)")
        let repair = try CamrollBinary.run(["verify", "--repair", "--db", catalog])
        let files = dir.files(in: "out").count
        #expect(repair.status == 0 && repair.stdout.contains("verified \(files) files: \(files) ok"), "\(repair.stdout)\(repair.stderr)")
    }

    /// The writer in another PID namespace, or run from a renamed binary, is alive: repair
    /// must leave its run open (once it closed it and added 1204 rows for files already recorded).
    @Test(arguments: ["renamed", "pid-namespace"])
    func repairNeverClosesTheRunOfALiveWriter(how: String) throws {
        if how == "pid-namespace" && (getuid() != 0 || !FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")) { return }
        let dir = try TemporaryDirectory()
        let copy = dir.file("stillwriting")
        try FileManager.default.copyItem(atPath: CamrollBinary.path, toPath: copy)
        let arguments = ["-d", "pattern", "-r", "64x48", "-n", "1000000", "--json", "--thumbnail", "none",
                         "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3")]
        let command = how == "renamed" ? [copy] + arguments : ["/usr/bin/unshare", "--pid", "--fork", "--mount-proc", CamrollBinary.path] + arguments
        // A child another test forks just as the copy is written holds it open for writing until
        // that child execs, and an exec of the copy then fails with ETXTBSY: tried again.
        var started: (process: Process, out: Pipe)?
        for attempt in 1...40 where started == nil {
            let process = CamrollBinary.programProcess(command)
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            do {
                try process.run()
                started = (process, out)
            } catch let error as NSError where attempt < 40
                && (error.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == Int(ETXTBSY) {
                usleep(50_000)
            }
        }
        let (process, out) = try #require(started)
        _ = try out.fileHandleForReading.read(upToCount: 1)  // the start event
        usleep(300_000)
        let repair = try CamrollBinary.run(["verify", "--repair", "--db", dir.file("c.sqlite3")])
        #expect(repair.stdout.contains("0 interrupted run(s) closed"), "\(repair.stdout)\(repair.stderr)")
        // unshare does not pass signals on: the writer (its child) is signalled itself.
        let writer = how == "renamed" ? process.processIdentifier : try childProcess(of: process.processIdentifier)
        kill(writer, SIGINT)
        process.waitUntilExit()
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.text("SELECT status FROM runs") == "cancelled")
        let rows = try catalog.int("SELECT count(*) FROM saves")
        let distinctPaths = try catalog.int("SELECT count(DISTINCT path) FROM saves")
        #expect(rows == dir.files(in: "out").count && rows == distinctPaths)
    }

    /// `snap -n 1000000 --json` into DIR/out, once its start event says saving has begun.
    func startLongRun(_ dir: TemporaryDirectory) throws -> (Process, Pipe, Pipe) {
        let process = CamrollBinary.process(["-d", "pattern", "-r", "64x48", "-n", "1000000", "--json", "--thumbnail", "none",
                                             "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3")])
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        _ = try out.fileHandleForReading.read(upToCount: 1)
        return (process, out, err)
    }

    func childProcess(of pid: Int32) throws -> Int32 {
        let children = try String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)
        return try #require(children.split(separator: " ").first.flatMap { Int32($0) })
    }

    /// Once SIGILL on every retry for a file dated before year 1; after 9999, year 0000. (On a
    /// tmpfs, which keeps 64-bit times; ext4 here clamps them to 1901–2038 itself.)
    @Test(.enabled(if: getuid() == 0, "a tmpfs, which stores any time, needs root to mount"),
          arguments: [(-70_000_000_000, "0001-01-01T00:00:00.000Z"), (400_000_000_000, "9999-12-31T23:59:59.999Z")])
    func repairRecordsAFileWithAnyModificationTime(seconds: Int, recorded: String) throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("out"), withIntermediateDirectories: false)
        let mount = try CamrollBinary.runProgram(["/bin/mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir.file("out")])
        try #require(mount.status == 0, "\(mount.stderr)")
        defer { _ = try? CamrollBinary.runProgram(["/bin/umount", dir.file("out")]) }
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-n", "3", "-o", dir.file("out/{seq}.jpg"),
                                       "--db", dir.file("c.sqlite3")]).status == 0)
        // A killed run, reconstructed: running, one file renamed but not recorded.
        let database = try Database(path: dir.file("c.sqlite3"))
        try database.execute("UPDATE runs SET status = 'running'; DELETE FROM saves WHERE seq = 3")
        var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, dir.file("out/3.jpg"), &times, 0) == 0)
        var status = stat()
        #expect(stat(dir.file("out/3.jpg"), &status) == 0 && status.st_mtim.tv_sec == seconds)
        let repair = try CamrollBinary.run(["verify", "--repair", "--db", dir.file("c.sqlite3")])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(repair.stdout.contains("1 unrecorded file(s) recorded"))
        #expect(try database.scalarText("SELECT saved_at FROM saves WHERE seq = 3") == recorded)
    }

    @Test func timestampsOfAnyDateAreWrittenInRange() {
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: -70_000_000_000)) == "0001-01-01T00:00:00.000Z")
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: 400_000_000_000)) == "9999-12-31T23:59:59.999Z")
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: .nan)) == "0001-01-01T00:00:00.000Z")
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: .infinity)) == "9999-12-31T23:59:59.999Z")
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: 0.123)) == "1970-01-01T00:00:00.123Z")
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59.000Z")
    }

    /// A FIFO at a saved path once blocked verify for ten minutes; a link to /dev/zero read forever.
    @Test func verifyAndDeleteNeverOpenWhatIsNotARegularFile() throws {
        let dir = try TemporaryDirectory()
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-n", "3", "-o", dir.file("out/{seq}.jpg"),
                                       "--db", dir.file("c.sqlite3")]).status == 0)
        try FileManager.default.removeItem(atPath: dir.file("out/1.jpg"))
        #expect(mkfifo(dir.file("out/1.jpg"), 0o644) == 0)
        try FileManager.default.removeItem(atPath: dir.file("out/2.jpg"))
        try FileManager.default.createSymbolicLink(atPath: dir.file("out/2.jpg"), withDestinationPath: "/dev/zero")
        let begin = Date()
        let verify = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
        #expect(Date().timeIntervalSince(begin) < 10)
        #expect(verify.status == 1)
        #expect(verify.stdout.contains("corrupt: \(dir.file("out/1.jpg")): not a regular file (a FIFO)"), "\(verify.stdout)")
        #expect(verify.stdout.contains("corrupt: \(dir.file("out/2.jpg")): not a regular file (a symbolic link)"), "\(verify.stdout)")
        #expect(verify.stdout.contains("1 ok, 2 corrupt"))
        let delete = try CamrollBinary.run(["delete", "--run", "1", "--force", "--db", dir.file("c.sqlite3")])
        #expect(delete.status == 1 && delete.stdout.contains("deleted 1 file(s)"), "\(delete.stdout)\(delete.stderr)")
        var status = stat()
        #expect(lstat(dir.file("out/1.jpg"), &status) == 0 && (status.st_mode & S_IFMT) == S_IFIFO)
        #expect(lstat(dir.file("out/2.jpg"), &status) == 0 && (status.st_mode & S_IFMT) == S_IFLNK)
    }

    /// Ctrl-C or SIGKILL halfway through `delete --run` once left files gone and rows `saved`.
    @Test(arguments: [SIGINT, SIGKILL])
    func anInterruptedDeleteLeavesCatalogAndDiskInAgreement(signal: Int32) throws {
        let dir = try TemporaryDirectory()
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-n", "6000", "--thumbnail", "none", "--quiet",
                                       "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3")]).status == 0)
        let process = CamrollBinary.process(["delete", "--run", "1", "--db", dir.file("c.sqlite3")])
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Once some files are gone.
        let deadline = Date().addingTimeInterval(20)
        while dir.files(in: "out").count > 5000 && Date() < deadline { usleep(2_000) }
        kill(process.processIdentifier, signal)
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if signal == SIGINT {
            #expect(process.terminationStatus == 130 || dir.files(in: "out").isEmpty, "\(stdout)")
            #expect(stdout.contains("cancelled after") || dir.files(in: "out").isEmpty, "\(stdout)")
        } else {
            #expect(try CamrollBinary.run(["verify", "--repair", "--db", dir.file("c.sqlite3")]).status == 0)
        }
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        let saved = Set(try catalog.rows("SELECT path FROM saves WHERE status = 'saved'", columns: 1).compactMap { $0[0] })
        #expect(saved == Set(dir.files(in: "out")))
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status NOT IN ('saved', 'deleted')") == 0)
        #expect(saved.count < 6000)
    }

    /// The main file once held no tables and everything sat in `-wal`: a copy of the catalog
    /// file alone said "no such table".
    @Test func aFinishedCatalogFileStandsAlone() throws {
        let dir = try TemporaryDirectory()
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-n", "20", "-o", dir.file("out/{seq}.jpg"),
                                       "--db", dir.file("c.sqlite3")]).status == 0)
        try FileManager.default.copyItem(atPath: dir.file("c.sqlite3"), toPath: dir.file("copy.sqlite3"))
        let list = try CamrollBinary.run(["list", "--run", "1", "--csv", "--db", dir.file("copy.sqlite3")])
        #expect(list.status == 0 && list.stdout.split(separator: "\n").count == 21, "\(list.stderr)")
    }

    /// On read-only media without a `-shm`, list, stats and verify once failed with 73.
    @Test(.enabled(if: getuid() == 0, "reading as 'nobody' a catalog nobody may write needs root to set up"))
    func aReadOnlyCatalogCanBeRead() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path)
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-n", "5", "-o", dir.file("out/{seq}.jpg"),
                                       "--db", dir.file("ro/c.sqlite3")]).status == 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.file("out"))
        try? FileManager.default.removeItem(atPath: dir.file("ro/c.sqlite3-shm"))
        try? FileManager.default.removeItem(atPath: dir.file("ro/c.sqlite3-wal"))
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: dir.file("ro/c.sqlite3"))
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: dir.file("ro"))
        for command in [["list"], ["stats"], ["verify"], ["show", "1"]] {
            let result = try CamrollBinary.run(command + ["--db", dir.file("ro/c.sqlite3")], prefix: Self.asNobody)
            #expect(result.status == 0, "\(command): \(result.stderr)")
        }
        let verify = try CamrollBinary.run(["verify", "--db", dir.file("ro/c.sqlite3")], prefix: Self.asNobody)
        #expect(verify.stdout.contains("verified 5 files: 5 ok"))
        let writing = try CamrollBinary.run(["verify", "--repair", "--db", dir.file("ro/c.sqlite3")], prefix: Self.asNobody)
        // Why, in the user's words ("attempt to write a readonly database" alone left it open).
        #expect(writing.status == 73 && writing.stderr.hasPrefix("camroll: error: cannot open catalog \(dir.file("ro/c.sqlite3")) "
                    + "for writing: attempt to write a readonly database (Permission denied)\n"), "\(writing.stderr)")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.file("ro"))
    }

    /// A catalog whose runs page is damaged once verified "30 ok" and exited 0.
    @Test func verifyChecksTheCatalogItself() throws {
        let dir = try TemporaryDirectory()
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-n", "30", "-o", dir.file("out/{seq}.jpg"),
                                       "--db", dir.file("c.sqlite3")]).status == 0)
        let (page, pageSize): (Int, Int) = try {
            let reader = try CatalogReader(dir.file("c.sqlite3"))
            return (try reader.int("SELECT rootpage FROM sqlite_master WHERE name = 'runs'"), try reader.int("PRAGMA page_size"))
        }()
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: dir.file("c.sqlite3")))
        try handle.seek(toOffset: UInt64((page - 1) * pageSize + 8))
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 64))
        try handle.close()
        let verify = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
        #expect(verify.status == 65, "\(verify.stdout)\(verify.stderr)")
        #expect(verify.stderr.contains("is corrupt"), "\(verify.stderr)")
        // The problem itself, not the heading SQLite puts before it.
        #expect(verify.stderr.contains("page") && !verify.stderr.contains("*** in database"), "\(verify.stderr)")
        // A run's verify reads its rows through the damaged page, and says so too.
        let run = try CamrollBinary.run(["verify", "--run", "1", "--db", dir.file("c.sqlite3")])
        #expect(run.status == 65 && run.stderr.contains("is corrupt"), "\(run.stdout)\(run.stderr)")
    }

    /// The catalog deleted mid-run once went unnoticed: exit 0, every row in a deleted file.
    @Test func aCatalogDeletedMidRunIsNoticed() throws {
        let dir = try TemporaryDirectory()
        let (process, _, err) = try startLongRun(dir)
        usleep(200_000)
        for suffix in ["", "-wal", "-shm"] { unlink(dir.file("c.sqlite3" + suffix)) }
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 74, "\(stderr)")
        #expect(stderr.contains("was deleted or moved"), "\(stderr)")
    }

    /// A lock held over the busy timeout mid-run once ended 69 with the run `running` and files
    /// without rows: saving stops, the summary counts them, and repair records them.
    @Test func aCatalogLockedMidRunStopsTheRunAndRepairRecordsTheRest() throws {
        let dir = try TemporaryDirectory()
        let (process, out, err) = try startLongRun(dir)
        usleep(100_000)
        let holder = try Database(path: dir.file("c.sqlite3"))
        holder.setBusyTimeout(milliseconds: 5000)
        try holder.execute("BEGIN EXCLUSIVE")
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try holder.execute("ROLLBACK")
        #expect(process.terminationStatus == 69, "\(stderr)")
        #expect(stderr.contains("is locked by another process") && stderr.contains("have no catalog row"), "\(stderr)")
        #expect(stdout.contains("\"event\":\"summary\""))
        let files = dir.files(in: "out").count
        let repair = try CamrollBinary.run(["verify", "--repair", "--db", dir.file("c.sqlite3")])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved'") == files)
        #expect(try catalog.text("SELECT status FROM runs") == "failed")
    }
}

@testable import CamrollKit
import Foundation
import Testing

/// list, show, verify, delete and stats, run as the binary against real catalogs and files.
@Suite struct CatalogToolTests {
    func snap(_ dir: TemporaryDirectory, _ extra: [String], count: Int = 10) throws -> CamrollBinary.Result {
        try CamrollBinary.run(options(["-d", "pattern", "-r", "320x240", "-n", String(count), "-o", dir.file("out/{seq}.jpg"),
                                       "--db", dir.file("c.sqlite3"), "--quiet"], then: extra))
    }

    /// Makes the catalog's run look killed: its row still says running, its pid is gone, and
    /// the saves after `seq` have no row.
    func reconstructKilledRun(_ dir: TemporaryDirectory, rowsUpTo seq: Int) throws {
        let database = try Database(path: dir.file("c.sqlite3"))
        try database.execute("UPDATE runs SET status = 'running', pid = 2147483646")
        try database.execute("DELETE FROM saves WHERE seq > \(seq)")
    }

    /// What runs a command as another user, one the file modes apply to: 'nobody' when the tests
    /// run as root (who reads and writes anything), with the catalog and `dir` made theirs to write.
    func anotherUser(_ dir: TemporaryDirectory) throws -> [String] {
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.path) where name.hasPrefix("c.sqlite3") {
            try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: dir.file(name))
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: dir.path)
        return getuid() == 0 ? HostileFileTests.asNobody : []
    }

    /// Where case matters, `Out.jpg` holding the bytes of a later `out.jpg` is overwritten data,
    /// not a replacement (that is for file systems that ignore case: see the exFAT test).
    @Test func anotherFilesBytesUnderANameThatDiffersInCaseAreAliased() throws {
        let dir = try TemporaryDirectory()
        for (name, quality) in [("Out.jpg", "90"), ("out.jpg", "50")] {
            #expect(try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "-q", quality, "-o", dir.file(name),
                                           "--db", dir.file("c.sqlite3")]).status == 0)
        }
        try Data(fileBytes(dir.file("out.jpg"))).write(to: URL(fileURLWithPath: dir.file("Out.jpg")))
        let result = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
        #expect(result.status == 1 && result.stdout.contains("1 ok, 0 corrupt, 0 missing, 1 aliased;"), "\(result.stdout)")
        #expect(result.stdout.hasPrefix("aliased: \(dir.file("Out.jpg")): holds the content of \(dir.file("out.jpg"))"))
    }

    @Test func verifyFindsExactlyTheCorruptMissingAndAliasedFiles() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, ["--stamp"], count: 500).status == 0)
        var flipped = try fileBytes(dir.file("out/100.jpg"))
        flipped[flipped.count / 2] ^= 0x01
        try Data(flipped).write(to: URL(fileURLWithPath: dir.file("out/100.jpg")))
        try FileManager.default.removeItem(atPath: dir.file("out/200.jpg"))
        try Data(fileBytes(dir.file("out/300.jpg"))).write(to: URL(fileURLWithPath: dir.file("out/400.jpg")))

        let result = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
        #expect(result.status == 1)
        #expect(result.stdout.contains("verified 500 files: 497 ok, 1 corrupt, 1 missing, 1 aliased"), "\(result.stdout)")
        #expect(result.stdout.contains("corrupt: \(dir.file("out/100.jpg"))"))
        #expect(result.stdout.contains("missing: \(dir.file("out/200.jpg"))"))
        #expect(!result.stdout.contains("directories that are gone"))
        #expect(result.stdout.contains("aliased: \(dir.file("out/400.jpg")): holds the content of \(dir.file("out/300.jpg"))"))

        let json = try CamrollBinary.run(["verify", "--json", "--db", dir.file("c.sqlite3")])
        let summary = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(summary["ok"] as? Int == 497 && summary["corrupt"] as? Int == 1 && summary["replaced"] as? Int == 0)
        #expect(summary["missing"] as? Int == 1 && summary["aliased"] as? Int == 1)

        // --repair records what was found; the catalog then matches the disk.
        // It exits 1 all the same: the data of those three files is lost.
        #expect(try CamrollBinary.run(["verify", "--repair", "--db", dir.file("c.sqlite3")]).status == 1)
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'missing'") == 1)
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'corrupt'") == 2)
        // A path given alone is checked alone.
        let one = try CamrollBinary.run(["verify", dir.file("out/001.jpg"), "--db", dir.file("c.sqlite3")])
        #expect(one.status == 0 && one.stdout.contains("verified 1 files: 1 ok"))
    }

    /// Files missing with their directory (a card not mounted): said so, beside the files.
    @Test func filesMissingWithTheirDirectoryAskWhetherTheCardIsMounted() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, [], count: 5).status == 0)
        try FileManager.default.moveItem(atPath: dir.file("out"), toPath: dir.file("elsewhere"))
        let result = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
        #expect(result.status == 1 && result.stdout.contains("0 ok, 0 corrupt, 5 missing"), "\(result.stdout)")
        #expect(result.stdout.contains("\nmissing files were in directories that are gone (\(dir.file("out"))): "
                                       + "is the card or share they are on mounted?\n"), "\(result.stdout)")
        let json = try CamrollBinary.run(["verify", "--json", "--db", dir.file("c.sqlite3")])
        let summary = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(summary["gone_directories"] as? [String] == [dir.file("out")])
        // A file where the directory was: the photos are as gone (they were "corrupt" before).
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: dir.file("out")))
        let replaced = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
        #expect(replaced.status == 1 && replaced.stdout.contains("0 ok, 0 corrupt, 5 missing"), "\(replaced.stdout)")
        #expect(replaced.stdout.contains("directories that are gone (\(dir.file("out")))"), "\(replaced.stdout)")
    }

    @Test(arguments: 1...10)
    func afterKill9RepairBringsCatalogAndDiskIntoAgreement(attempt: Int) throws {
        let dir = try TemporaryDirectory()
        let (process, _) = try CamrollBinary.startSaving(
            ["-d", "pattern", "-r", "320x240", "-n", "100000", "--json", "-o", dir.file("out/{seq}.jpg"),
             "--db", dir.file("c.sqlite3")] + (attempt % 2 == 0 ? ["--stamp"] : []))
        usleep(UInt32.random(in: 20_000...500_000))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()

        let repair = try CamrollBinary.run(["verify", "--repair", "--db", dir.file("c.sqlite3")])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(repair.stdout.contains("1 interrupted run(s) closed"), "\(repair.stdout)")

        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.file("out"))) ?? []
        #expect(names.allSatisfy { !$0.hasPrefix(".") }, "temporary files left: \(names.filter { $0.hasPrefix(".") })")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        let rows = try catalog.rows("SELECT path FROM saves WHERE status = 'saved'", columns: 1).compactMap { $0[0] }
        #expect(Set(rows) == Set(names.map { dir.file("out/" + $0) }))
        #expect(rows.count == Set(rows).count)
        #expect(try catalog.text("SELECT status FROM runs") == "failed")

        let verify = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
        #expect(verify.status == 0 && verify.stdout.contains("verified \(names.count) files: \(names.count) ok"), "\(verify.stdout)")
    }

    /// A file under a killed run's names that holds none of its photos — on FAT, a power cut
    /// between the rename and the sync after it leaves the new name with the size and no data;
    /// without `--fsync`, one can leave names with no data at all — is left alone and said, not
    /// passed over in silence, an empty one as such; another run's recorded file under the same
    /// names is not news.
    @Test func repairSaysWhichFilesUnderARunsNamesAreNotItsOwn() throws {
        let dir = try TemporaryDirectory()
        // Run 1: 1.jpg … 12.jpg, recorded; 11 and 12 stay its own.
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "-n", "12", "-o", dir.file("out/{seq:1}.jpg"),
                                       "--db", dir.file("c.sqlite3"), "--quiet"]).status == 0)
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "-q", "50", "-n", "10", "-o", dir.file("out/{seq:1}.jpg"),
                                       "--overwrite", "--db", dir.file("c.sqlite3"), "--quiet"]).status == 0)
        let database = try Database(path: dir.file("c.sqlite3"))
        // Run 2 killed: its rows for 1-3 remain; 4-10 are files without rows; 9 holds other
        // bytes, 8 none.
        try database.execute("UPDATE runs SET status = 'running', pid = 2147483646 WHERE id = 2")
        try database.execute("DELETE FROM saves WHERE seq > 3 AND capture_id IN (SELECT id FROM captures WHERE run_id = 2)")
        try Data("not a photo".utf8).write(to: URL(fileURLWithPath: dir.file("out/9.jpg")))
        try Data(count: 0).write(to: URL(fileURLWithPath: dir.file("out/8.jpg")))
        let repair = try CamrollBinary.run(["verify", "--repair", "--db", dir.file("c.sqlite3")])
        #expect(repair.stdout.contains("1 interrupted run(s) closed, 5 unrecorded file(s) recorded"), "\(repair.stdout)")
        #expect(repair.stdout.contains("left alone: 2 file(s) under the names of a run closed here hold none of its photos ("),
                "\(repair.stdout)")
        #expect(repair.stdout.contains(" and 1 more): 1 of them empty: saves whose data a power cut kept from the disk; "
                                       + "a save a crash cut short where names are not atomic (FAT), or another program's file\n"),
                "\(repair.stdout)")
        #expect(FileManager.default.fileExists(atPath: dir.file("out/9.jpg")) && FileManager.default.fileExists(atPath: dir.file("out/8.jpg")))
        try database.execute("UPDATE runs SET status = 'running', pid = 2147483646 WHERE id = 2")
        let json = try CamrollBinary.run(["verify", "--repair", "--json", "--db", dir.file("c.sqlite3")])
        let summary = try #require(json.stdout.split(separator: "\n").last.flatMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        let repaired = try #require(summary["repaired"] as? [String: Any])
        #expect(Set(repaired["unrecognized_files"] as? [String] ?? []) == [dir.file("out/8.jpg"), dir.file("out/9.jpg")], "\(json.stdout)")
        #expect(repaired["empty_unrecognized_files"] as? Int == 1, "\(json.stdout)")
    }

    /// Three repairs at once of one killed run: one repairs it, the others leave it alone —
    /// each file recorded once (two at once recorded 2990 files twice).
    @Test func repairsAtTheSameTimeRecordEachFileOnce() throws {
        let dir = try TemporaryDirectory()
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-n", "2000", "-o", dir.file("out/{seq}.jpg"),
                                       "--db", dir.file("c.sqlite3"), "--quiet"]).status == 0)
        try reconstructKilledRun(dir, rowsUpTo: 10)
        let repairs = (0..<3).map { _ in CamrollBinary.process(["verify", "--repair", "--db", dir.file("c.sqlite3")]) }
        let outputs = repairs.map { repair in
            let out = Pipe()
            repair.standardOutput = out
            repair.standardError = FileHandle.nullDevice
            return out
        }
        for repair in repairs { try repair.run() }
        let printed = outputs.map { String(decoding: $0.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
        for repair in repairs { repair.waitUntilExit() }
        #expect(repairs.allSatisfy { $0.terminationStatus == 0 }, "\(printed)")
        #expect(printed.filter { $0.contains("repaired: 1 interrupted run(s) closed, 1990 unrecorded file(s) recorded") }.count == 1,
                "\(printed)")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM saves") == 2000)
        #expect(try catalog.int("SELECT count(DISTINCT path) FROM saves") == 2000)
        #expect(try catalog.text("SELECT status FROM runs") == "failed")
    }

    @Test func repairNeverTouchesFilesThatAreNotTheRuns() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, []).status == 0)
        try reconstructKilledRun(dir, rowsUpTo: 8)
        try Data("not a photo".utf8).write(to: URL(fileURLWithPath: dir.file("out/11.jpg")))
        try Data("user's".utf8).write(to: URL(fileURLWithPath: dir.file("out/.x.jpg.camroll-1.tmp")))
        let repair = try CamrollBinary.run(["verify", "--repair", "--db", dir.file("c.sqlite3")])
        #expect(repair.status == 0)
        #expect(repair.stdout.contains("2 unrecorded file(s) recorded"), "\(repair.stdout)")
        #expect(FileManager.default.fileExists(atPath: dir.file("out/11.jpg")))
        #expect(FileManager.default.fileExists(atPath: dir.file("out/.x.jpg.camroll-1.tmp")))
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved'") == 10)
        #expect(try catalog.rows("SELECT seq FROM saves ORDER BY seq", columns: 1).map { $0[0] } == (1...10).map { String($0) })
    }

    /// A repair that cannot list a killed run's directory, or remove its temporary file, stops
    /// and leaves the run open: closed without them, its last files would stay unrecorded for
    /// good. The user who can then finishes it.
    @Test func aRepairThatCannotReadTheRunsDirectoryLeavesTheRunOpen() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, []).status == 0)
        // A killed run whose last two files have no row, the file it was writing under its temporary name.
        try reconstructKilledRun(dir, rowsUpTo: 8)
        try Data("cut".utf8).write(to: URL(fileURLWithPath: dir.file("out/.11.jpg.camroll-2147483646-0123456789ab.tmp")))
        // The first repairs run as a user who may not read or write `out`.
        let prefix = try anotherUser(dir)
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        for (mode, error) in [(0o000, "cannot read \(dir.file("out")): Permission denied"),
                              (0o555, "cannot remove the temporary file \(dir.file("out/.11.jpg"))")] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: dir.file("out"))
            let repair = try CamrollBinary.run(["verify", "--repair", "--db", dir.file("c.sqlite3")], prefix: prefix)
            #expect(repair.status == 77 && repair.stderr.hasPrefix("camroll: error: \(error)"), "\(repair.status) \(repair.stderr)")
            #expect(try catalog.text("SELECT status FROM runs") == "running")
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.file("out"))
        let repair = try CamrollBinary.run(["verify", "--repair", "--db", dir.file("c.sqlite3")])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        // (The files may have been recorded by the repair that could list them but not remove.)
        #expect(repair.stdout.contains("1 interrupted run(s) closed, "), "\(repair.stdout)")
        #expect(repair.stdout.contains(" 1 temporary file(s) removed"), "\(repair.stdout)")
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved'") == 10)
        #expect(dir.files(in: "out").count == 10)
    }

    /// A stopped delete's row stays `deleting` while its file cannot be removed (a directory
    /// this user may not write): marked `deleted` with the file still there, the catalog and the
    /// disk would disagree for good. The user who can then finishes it.
    @Test func aStoppedDeleteIsFinishedOnlyWhenItsFileCanBeRemoved() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, [], count: 3).status == 0)
        try Database(path: dir.file("c.sqlite3")).execute("UPDATE saves SET status = 'deleting' WHERE seq = 2")
        let prefix = try anotherUser(dir)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: dir.file("out"))
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        let refused = try CamrollBinary.run(["verify", "--repair", "--db", dir.file("c.sqlite3")], prefix: prefix)
        #expect(refused.status == 77 && refused.stderr.hasPrefix("camroll: error: cannot remove \(dir.file("out/2.jpg")): Permission denied"),
                "\(refused.status) \(refused.stderr)")
        #expect(try catalog.text("SELECT status FROM saves WHERE seq = 2") == "deleting")
        #expect(FileManager.default.fileExists(atPath: dir.file("out/2.jpg")))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.file("out"))
        let repair = try CamrollBinary.run(["verify", "--repair", "--db", dir.file("c.sqlite3")])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(try catalog.text("SELECT status FROM saves WHERE seq = 2") == "deleted")
        #expect(!FileManager.default.fileExists(atPath: dir.file("out/2.jpg")))
    }

    /// verify --repair while a delete is at work: the files the delete removes are not missing
    /// to the check, and the rows it has marked `deleting` are its own to finish. (Before, such
    /// a repair marked ~1000 of 20 000 deleted rows `missing` and finished the delete's batches
    /// itself, the delete then saying "204 were already missing".)
    @Test func aRepairBesideADeleteLeavesTheDeleteItsRows() throws {
        let dir = try TemporaryDirectory()
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-n", "20000", "-o", dir.file("out/{seq}.jpg"),
                                       "--db", dir.file("c.sqlite3"), "--quiet"]).status == 0)
        let delete = CamrollBinary.process(["delete", "--run", "1", "--db", dir.file("c.sqlite3")])
        let out = Pipe()
        delete.standardOutput = out
        delete.standardError = FileHandle.nullDevice
        try delete.run()
        var repairs: [String] = []
        while delete.isRunning {
            let repair = try CamrollBinary.run(["verify", "--repair", "--db", dir.file("c.sqlite3"), "--no-progress"])
            #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
            repairs.append(repair.stdout)
        }
        let deleted = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        delete.waitUntilExit()
        #expect(repairs.count >= 2, "the delete ended before a repair could run beside it")
        #expect(delete.terminationStatus == 0 && deleted.hasPrefix("deleted 20000 file(s), ") && !deleted.contains("already missing"),
                "\(deleted)")
        for repair in repairs {
            #expect(repair.contains(" 0 corrupt, 0 missing, 0 aliased;") && repair.contains(" 0 row(s) marked\n"), "\(repair)")
            #expect(!repair.contains("interrupted deletion(s) finished"), "\(repair)")
        }
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'deleted'") == 20000)
        #expect(dir.files(in: "out").isEmpty)
    }

    /// Two deletes of one run at the same time: each file is deleted and counted by one of them
    /// and left to it by the other, and every row ends `deleted`. (Before, both counted
    /// a file whose unlink one of them lost: 24 210 deletions reported for 19 834 files.)
    @Test func twoDeletesOfOneRunCountEachFileOnce() throws {
        let dir = try TemporaryDirectory()
        let files = 20000
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-n", String(files), "-o", dir.file("out/{seq}.jpg"),
                                       "--db", dir.file("c.sqlite3"), "--quiet"]).status == 0)
        let deletes = (0..<2).map { _ in CamrollBinary.process(["delete", "--run", "1", "--db", dir.file("c.sqlite3")]) }
        let outputs = deletes.map { delete in
            let out = Pipe()
            delete.standardOutput = out
            return out
        }
        for delete in deletes { try delete.run() }
        let printed = outputs.map { String(decoding: $0.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
        for delete in deletes { delete.waitUntilExit() }
        var deleted = 0
        for (delete, text) in zip(deletes, printed) {
            #expect(delete.terminationStatus == 0 && !text.contains("already missing"), "\(text)")
            if let range = text.range(of: "^deleted [0-9]+ file", options: .regularExpression) {
                deleted += Int(text[range].split(separator: " ")[1]) ?? 0
            }
        }
        #expect(deleted == files, "\(printed)")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'deleted'") == files)
        #expect(dir.files(in: "out").count == 0)
    }

    /// verify of a run still saving checks what it has recorded and says the run goes on (it said
    /// "verified 1860 files: 1860 ok" and nothing more, of a run 1880 saves into 10 000), in text
    /// and JSON; once the run has ended, it says nothing of the kind.
    @Test func verifyOfARunStillSavingSaysSo() throws {
        let dir = try TemporaryDirectory()
        let snap = CamrollBinary.process(["-d", "pattern", "-r", "64x48", "--frames", "2000", "-n", "2", "--interval", "20ms",
                                          "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3"), "--quiet"])
        snap.standardError = FileHandle.nullDevice
        try snap.run()
        defer { if snap.isRunning { snap.terminate() } }
        var recorded = 0
        for _ in 0..<200 where recorded < 10 {
            usleep(50_000)
            recorded = (try? CatalogReader(dir.file("c.sqlite3")).int("SELECT count(*) FROM saves")) ?? 0
        }
        try #require(recorded >= 10 && snap.isRunning, "the run did not start saving, or ended")
        let text = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3"), "--no-progress"])
        #expect(text.status == 0 && text.stdout.contains("\nstill running: run 1 is saving now; "), "\(text.stdout)")
        let json = try CamrollBinary.run(["verify", "--run", "1", "--json", "--db", dir.file("c.sqlite3")])
        let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(report?["running_runs"] as? [Int] == [1], "\(json.stdout.suffix(300))")
        snap.interrupt()
        snap.waitUntilExit()
        let after = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3"), "--no-progress"])
        #expect(after.status == 0 && !after.stdout.contains("still running"), "\(after.stdout)")
    }

    @Test func deleteRemovesFilesAndMarksRowsTogether() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, ["--stamp"]).status == 0)
        let one = try CamrollBinary.run(["delete", "--save", "1", "--db", dir.file("c.sqlite3")])
        #expect(one.status == 0 && one.stdout.hasPrefix("deleted 1 file(s)"))
        #expect(!FileManager.default.fileExists(atPath: dir.file("out/01.jpg")))

        try Data("edited by the user".utf8).write(to: URL(fileURLWithPath: dir.file("out/02.jpg")))
        let run = try CamrollBinary.run(["delete", "--run", "1", "--db", dir.file("c.sqlite3")])
        #expect(run.status == 1)
        #expect(run.stderr.hasPrefix("camroll: error: 1 file(s) no longer match"))
        #expect(run.stdout.hasPrefix("deleted 8 file(s)"))
        #expect(FileManager.default.fileExists(atPath: dir.file("out/02.jpg")))
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'deleted'") == 9)
        #expect(try catalog.text("SELECT status FROM saves WHERE seq = 2") == "saved")

        let forced = try CamrollBinary.run(["delete", "--run", "1", "--force", "--db", dir.file("c.sqlite3")])
        #expect(forced.status == 0 && !FileManager.default.fileExists(atPath: dir.file("out/02.jpg")))
        #expect(dir.files(in: "out").isEmpty)
        let again = try CamrollBinary.run(["delete", "--run", "1", "--db", dir.file("c.sqlite3")])
        #expect(again.status == 66 && again.stderr.contains("nothing to delete"))
    }

    /// Too many open files is this process's limit, not a damaged file: verify, verify --repair
    /// and delete stop with the reason, report nothing corrupt, and change no row or file.
    @Test func aFileLimitStopsTheChecksWithoutCallingAnyFileDamaged() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, [], count: 20).status == 0)
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        var stoppedAt: [String: Int] = [:]
        // From a limit under which not even the catalog opens to one under which all goes well.
        for limit in 4...16 {
            for command in [["verify", "--jobs", "4"], ["verify", "--repair"], ["delete", "--run", "1"]] {
                let result = try CamrollBinary.run(
                    command + ["--db", dir.file("c.sqlite3"), "--no-progress"], prefix: ["/usr/bin/prlimit", "--nofile=\(limit)"])
                let done = command[0] == "delete" ? "deleted 20 file(s)" : "verified 20 files: 20 ok"
                if result.status == 0 {
                    #expect(result.stdout.contains(done), "\(limit) \(command): \(result.stdout)")
                    if command[0] == "delete" { return #expect(dir.files(in: "out").isEmpty && stoppedAt.count == 3, "\(stoppedAt)") }
                    continue
                }
                #expect([73, 74].contains(result.status), "\(limit) \(command): \(result.status) \(result.stderr)")
                #expect(!result.stdout.contains("corrupt:") && !result.stdout.contains("kept"), "\(result.stdout)")
                if result.stderr.hasPrefix("camroll: error: cannot read \(dir.file("out/"))"),
                   result.stderr.contains("Too many open files\nRaise the limit on open files (ulimit -n)") {
                    stoppedAt[command.joined(separator: " "), default: limit] = limit
                }
                #expect(dir.files(in: "out").count == 20)
                #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved'") == 20)
            }
        }
        Issue.record("no limit let delete finish: \(stoppedAt)")
    }

    /// A file this user may not read is not a damaged file either: exit 77, no row changed.
    @Test func aFileThisUserCannotReadStopsTheChecksWithExit77() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, [], count: 5).status == 0)
        let prefix = try anotherUser(dir)
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: dir.file("out/1.jpg"))
        for command in [["verify"], ["verify", "--repair", "--jobs", "3"], ["delete", "--run", "1"]] {
            let result = try CamrollBinary.run(command + ["--db", dir.file("c.sqlite3"), "--no-progress"], prefix: prefix)
            #expect(result.status == 77, "\(command): \(result.status) \(result.stdout) \(result.stderr)")
            #expect(result.stderr.hasPrefix("camroll: error: cannot read \(dir.file("out/1.jpg")): Permission denied\n"))
            #expect(!result.stdout.contains("corrupt:"), "\(result.stdout)")
        }
        #expect(dir.files(in: "out").count == 5)
        #expect(try CatalogReader(dir.file("c.sqlite3")).int("SELECT count(*) FROM saves WHERE status = 'saved'") == 5)
    }

    @Test func listShowAndStats() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, []).status == 0)
        #expect(try snap(dir, ["-o", dir.file("second/{seq}.jpg")], count: 3).status == 0)

        let list = try CamrollBinary.run(["list", "--db", dir.file("c.sqlite3")])
        let lines = list.stdout.split(separator: "\n")
        #expect(list.status == 0 && lines.count == 3 && lines[0].hasPrefix("id"))
        #expect(lines[1].hasPrefix("2 ") && lines[1].contains("completed") && lines[1].contains("pattern"))
        let json = try CamrollBinary.run(["list", "--json", "--db", dir.file("c.sqlite3")])
        let runs = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(runs.map { $0["saved"] as? Int } == [3, 10] && runs.map { $0["requested"] as? Int } == [3, 10])
        let csv = try CamrollBinary.run(["list", "--run", "1", "--csv", "--db", dir.file("c.sqlite3")])
        let csvLines = csv.stdout.split(separator: "\n")
        #expect(csvLines.count == 11 && csvLines[0] == "id,seq,path,bytes,xxh128,saved_at,duration_us,synced,status")

        let show = try CamrollBinary.run(["show", "1", "--db", dir.file("c.sqlite3")])
        #expect(show.status == 0 && show.stdout.contains("status:           completed"))
        #expect(show.stdout.contains("YUYV") && show.stdout.contains("320x240"))
        let missing = try CamrollBinary.run(["show", "99", "--db", dir.file("c.sqlite3")])
        #expect(missing.status == 66 && missing.stderr.hasPrefix("camroll: error: no run 99"))

        let stats = try CamrollBinary.run(["stats", "--run", "1", "--db", dir.file("c.sqlite3")])
        #expect(stats.status == 0 && stats.stdout.hasPrefix("10 saves, "))
        #expect(stats.stdout.contains("p99") && stats.stdout.contains("█"))
        let noCatalog = try CamrollBinary.run(["list", "--db", dir.file("none.sqlite3")])
        #expect(noCatalog.status == 66 && noCatalog.stderr.hasPrefix("camroll: error: no catalog at"))
    }

    /// Makes the catalog's 100-save run look like one of many: `copies` more rows of each save,
    /// their paths `renamed` (files that do not exist) or the same (files read many times).
    func addRows(_ dir: TemporaryDirectory, copies: Int, renamed: Bool) throws {
        try Database(path: dir.file("c.sqlite3")).execute("""
            WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < \(copies))
            INSERT INTO saves(capture_id, seq, path, bytes, xxh128, saved_at, duration_us, synced, status)
            SELECT s.capture_id, s.seq + 100 * k.i, s.path\(renamed ? " || '.' || k.i" : ""), s.bytes, s.xxh128, s.saved_at,
                   s.duration_us, s.synced, s.status FROM saves s, k WHERE s.seq <= 100
            """)
    }

    /// Under this limit on its heap, a command that holds every row of a large run dies.
    let heapLimit = ["/usr/bin/prlimit", "--data=\(40 << 20)"]

    /// A run of many saves (a fill of a large disk) is listed in the memory of a few rows, in
    /// every format, each line of the table aligned with the header. (Before, the whole table
    /// was built in memory first: 2.3 GB for two million saves; under this test's limit on the
    /// heap the listing died.)
    @Test(memoryLimitsApply) func aLargeRunIsListedInLittleMemory() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, [], count: 100).status == 0)
        let copies = 1000
        try addRows(dir, copies: copies, renamed: true)
        let rows = 100 * (copies + 1)
        let text = try CamrollBinary.run(["list", "--run", "1", "--db", dir.file("c.sqlite3")], prefix: heapLimit)
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n")
        #expect(lines.count == rows + 1)
        let statusColumn = lines.first?.range(of: "status").map { lines[0].distance(from: lines[0].startIndex, to: $0.lowerBound) }
        #expect(statusColumn != nil && lines.allSatisfy { $0.count == statusColumn! + "status".count || $0.count == statusColumn! + "saved".count })
        #expect(lines.last?.hasPrefix("\(rows)  ") == true && lines.last?.hasSuffix(" saved") == true)
        let csv = try CamrollBinary.run(["list", "--run", "1", "--csv", "--db", dir.file("c.sqlite3")], prefix: heapLimit)
        #expect(csv.status == 0 && csv.stdout.split(separator: "\n").count == rows + 1, "\(csv.stderr)")
        let json = try CamrollBinary.run(["list", "--run", "1", "--json", "--db", dir.file("c.sqlite3")], prefix: heapLimit)
        #expect(json.status == 0, "\(json.stderr)")
        let saves = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(saves?.count == rows && saves?.last?["seq"] as? Int == rows && saves?.last?["status"] as? String == "saved")
    }

    /// A run of many saves is checked in the memory of one batch of rows, not of them all (it
    /// took 1 GB for two million saves; under this test's limit on the heap it died), and every
    /// row is read: each batch starts where the last ended.
    @Test(memoryLimitsApply) func aLargeRunIsVerifiedInLittleMemory() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, ["-r", "64x48"], count: 100).status == 0)
        try addRows(dir, copies: 1000, renamed: false)
        let rows = 100 * 1001
        let verify = try CamrollBinary.run(["verify", "--jobs", "2", "--db", dir.file("c.sqlite3")], prefix: heapLimit)
        #expect(verify.status == 0 && verify.stdout.hasPrefix("verified \(rows) files: \(rows) ok, 0 corrupt"),
                "\(verify.stdout)\(verify.stderr)")
        // One file changed: every row that names it is found, in whichever batch.
        try Data("changed".utf8).write(to: URL(fileURLWithPath: dir.file("out/050.jpg")))
        let changed = try CamrollBinary.run(["verify", "--json", "--db", dir.file("c.sqlite3")], prefix: heapLimit)
        let report = try JSONSerialization.jsonObject(with: Data(changed.stdout.utf8)) as? [String: Any]
        #expect(changed.status == 1 && report?["corrupt"] as? Int == 1001 && report?["ok"] as? Int == rows - 1001, "\(changed.stdout.prefix(300))")
    }

    /// A run of many saves is deleted in the memory of one batch, every row of it marked.
    @Test(memoryLimitsApply) func aLargeRunIsDeletedInLittleMemory() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, ["-r", "64x48"], count: 100).status == 0)
        try addRows(dir, copies: 2000, renamed: true)
        let delete = try CamrollBinary.run(["delete", "--run", "1", "--db", dir.file("c.sqlite3")], prefix: heapLimit)
        #expect(delete.status == 0 && delete.stdout.hasPrefix("deleted 100 file(s), ")
                && delete.stdout.contains("; 200000 were already missing"), "\(delete.stdout)\(delete.stderr)")
        #expect(try CatalogReader(dir.file("c.sqlite3")).int("SELECT count(*) FROM saves WHERE status = 'deleted'") == 200100)
        #expect(dir.files(in: "out").count == 0)
    }

    @Test func thumbnailsAndMaxBytes() throws {
        let dir = try TemporaryDirectory()
        // (--max-bytes encodes 4:2:0, in which the pattern at -q 90 takes about 17.7 kB.)
        let result = try CamrollBinary.run(["-d", "pattern", "-r", "1280x720", "--max-bytes", "17K", "-o", dir.file("a.jpg"),
                                            "--db", dir.file("c.sqlite3")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try fileBytes(dir.file("a.jpg")).count <= 17 * 1024)
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        let quality = try catalog.int("SELECT jpeg_quality FROM captures")
        #expect(quality < 90 && quality >= 1)
        // One step up would not have fitted, with the file's EXIF block: the search found the
        // highest quality that does. The search encodes the pixels of the first, 4:2:0, JPEG.
        let exifBytes = try #require(JPEGSegments.exifSegments(of: fileBytes(dir.file("a.jpg"))).first).range.count
        let frame = try TestPattern(resolution: Resolution(width: 1280, height: 720)).nextFrame()
        let encoder = try JPEGEncoder()
        let (_, first) = try JPEGDecoder().decodeRGB(encoder.encode(frame, quality: 90, subsampling: .s420).bytes)
        let pixels = RGBImage(width: 1280, height: 720, pixels: first).frame
        #expect(try encoder.encode(pixels, quality: quality + 1, subsampling: .s420).bytes.count + exifBytes > 17 * 1024)

        let thumbnail = try #require(try catalog.database.prepare("SELECT jpeg FROM thumbnails").stepBlob())
        let (header, _) = try JPEGDecoder().decodeRGB(thumbnail)
        #expect(header == JPEGDecoder.Header(width: 160, height: 90))

        let none = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "--thumbnail", "none", "-o", dir.file("b.jpg"),
                                          "--db", dir.file("c.sqlite3")])
        #expect(none.status == 0)
        #expect(try catalog.int("SELECT count(*) FROM captures WHERE id NOT IN (SELECT capture_id FROM thumbnails)") == 1)

        let tooSmall = try CamrollBinary.run(["-d", "pattern", "-r", "1280x720", "--max-bytes", "1K", "-o", dir.file("c.jpg"),
                                              "--db", dir.file("c.sqlite3")])
        #expect(tooSmall.status == 65 && tooSmall.stderr.contains("even at quality 1"))
        #expect(!FileManager.default.fileExists(atPath: dir.file("c.jpg")))

        // A limit the pixels alone would fit in, but not with the EXIF block: the message
        // counts what the file would take, which is over the limit (it once said "703 bytes,
        // over --max-bytes 800"), and --no-exif is the way out.
        let withExif = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "--max-bytes", "800", "-o", dir.file("d.jpg"),
                                              "--db", dir.file("c.sqlite3")])
        #expect(withExif.status == 65, "\(withExif.stderr)")
        let stated = withExif.stderr.firstMatch(of: /takes (\d+) bytes \((\d+) of them its EXIF block\), over --max-bytes 800/)
        #expect(stated.map { Int($0.1)! > 800 && Int($0.2)! > 0 } == true, "\(withExif.stderr)")
        #expect(withExif.stderr.contains("--no-exif"))
        let withoutExif = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "--max-bytes", "800", "--no-exif",
                                                 "-o", dir.file("d.jpg"), "--db", dir.file("c.sqlite3")])
        #expect(withoutExif.status == 0, "\(withoutExif.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.file("d.jpg"))).count <= 800)
    }

    /// A full disk, for real: a 1 MiB tmpfs where this machine lets us mount one.
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aFullDiskEndsTheRunCleanly() throws {
        let dir = try TemporaryDirectory()
        let mountPoint = dir.file("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        let mount = try CamrollBinary.runProgram(["/bin/mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint])
        try #require(mount.status == 0, "cannot mount a tmpfs: \(mount.stderr)")
        defer { _ = try? CamrollBinary.runProgram(["/bin/umount", mountPoint]) }
        try expectFullDiskHandled(dir, output: mountPoint + "/{seq}.jpg", arguments: ["-r", "1280x720"],
                                  message: "no space left on device", someSaved: true)
    }

    /// A file-size limit (RLIMIT_FSIZE, `prlimit --fsize`; no privilege needed): EFBIG on the
    /// first picture larger than the limit, reported like a full disk, not a crash by SIGXFSZ.
    /// The limit holds for the catalog's files too: 150 000 bytes leave room for a new catalog's
    /// write-ahead log (its eight schema steps and the run's rows; 120 000 no longer did once the
    /// eighth came), under the 3840x2160 picture's 178 kB.
    @Test func aFileSizeLimitEndsTheRunCleanly() throws {
        let dir = try TemporaryDirectory()
        try expectFullDiskHandled(dir, output: dir.file("out/{seq}.jpg"), arguments: ["-r", "3840x2160", "-q", "100"],
                                  message: "file too large", someSaved: false, prefix: ["/usr/bin/prlimit", "--fsize=150000", "--"])
    }

    func expectFullDiskHandled(_ dir: TemporaryDirectory, output: String, arguments: [String], message: String,
                               someSaved: Bool, prefix: [String] = []) throws {
        let result = try CamrollBinary.run(
            options(["-d", "pattern", "-n", "1000", "--stamp", "-o", output, "--db", dir.file("c.sqlite3"), "--json"], then: arguments),
            prefix: prefix)
        let status: Int32 = 74
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("camroll: error: \(message)"), "\(result.stderr)")
        // The summary event, then (with --json) the error as an event too.
        let lines = result.stdout.split(separator: "\n")
        let summary = try #require(JSONSerialization.jsonObject(
            with: Data((lines.first { $0.contains("\"event\":\"summary\"") } ?? "").utf8)) as? [String: Any])
        #expect(lines.last?.contains("\"event\":\"error\"") == true && lines.last?.contains("\"exit\":74") == true)
        let directory = (output as NSString).deletingLastPathComponent
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        #expect(names.allSatisfy { !$0.hasPrefix(".") }, "partial temporary file left: \(names)")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.text("PRAGMA integrity_check") == "ok")
        #expect(try catalog.text("SELECT status FROM runs") == "failed")
        #expect(try catalog.text("SELECT error FROM runs")?.contains(message) == true)
        let saved = try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved'")
        #expect(saved == names.count && saved < 1000 && (saved > 0) == someSaved)
        #expect(summary["saves"] as? Int == saved && summary["status"] as? String == "failed")
        let bytes = try catalog.int("SELECT coalesce(sum(bytes), 0) FROM saves")
        #expect(summary["bytes"] as? Int == bytes)
        let verify = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
        #expect(verify.status == 0, "\(verify.stdout)")
    }
}

extension Statement {
    func stepBlob() throws -> [UInt8]? { try step() ? blob(0) : nil }
}

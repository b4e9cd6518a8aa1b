import Foundation
import Testing

@testable import CamrollKit

/// camroll as a storage tester: `--fill` and what `verify` says of it.
@Suite(.serialized) struct StorageTests {
    /// A small tmpfs, mounted for one test (needs root, as mount does).
    final class SmallFileSystem {
        let path: String

        init(_ dir: TemporaryDirectory, size: String, inodes: Int? = nil, readOnly: Bool = false) throws {
            path = dir.file("small")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            let options = "size=\(size)" + (inodes.map { ",nr_inodes=\($0)" } ?? "") + (readOnly ? ",ro" : "")
            let mount = try CamrollBinary.runProgram(["/bin/mount", "-t", "tmpfs", "-o", options, "tmpfs", path])
            try #require(mount.status == 0, "cannot mount a tmpfs: \(mount.stderr)")
        }

        deinit { _ = try? CamrollBinary.runProgram(["/bin/umount", path]) }

        /// All the room left but `bytes` taken by another file, as anything else on a card might.
        func takeAllBut(_ bytes: Int) throws {
            var info = statvfs()
            try #require(statvfs(path, &info) == 0)
            try Data(count: Int(info.f_bavail) * Int(info.f_frsize) - bytes).write(to: URL(fileURLWithPath: path + "/taken"))
        }

        /// The write-protect switch turned on after the card was written.
        func remountReadOnly() throws {
            let remount = try CamrollBinary.runProgram(["/bin/mount", "-o", "remount,ro", path])
            try #require(remount.status == 0, "cannot remount read-only: \(remount.stderr)")
        }

        var freeBytes: Int {
            var info = statvfs()
            return statvfs(path, &info) == 0 ? Int(info.f_bavail) * Int(info.f_frsize) : -1
        }
    }

    /// Saves until ENOSPC, which is the normal end of a fill: exit 0, every file on disk has its
    /// row and reads back intact, no partial file is left, and the space left is less than one
    /// more file.
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aFillSavesUntilTheFileSystemIsFullAndEndsCleanly() throws {
        let dir = try TemporaryDirectory()
        let small = try SmallFileSystem(dir, size: "4m")
        let result = try CamrollBinary.run(
            ["-d", "pattern", "-r", "320x240", "--fill", "-o", small.path + "/{seq}.jpg", "--db", dir.file("c.sqlite3")])
        #expect(result.status == 0, "\(result.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: small.path)
        #expect(files.allSatisfy { !$0.hasPrefix(".") }, "partial temporary file left: \(files)")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        let saved = try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved'")
        #expect(saved == files.count && saved > 100)
        #expect(try catalog.text("SELECT status FROM runs") == "completed")
        let largest = try catalog.int("SELECT max(bytes) FROM saves")
        #expect(small.freeBytes >= 0 && small.freeBytes < largest + 4096, "free \(small.freeBytes), a file \(largest)")
        let bytes = try catalog.int("SELECT sum(bytes) FROM saves")
        #expect(result.stdout.hasPrefix("filled \(saved) files, \(Units.bytes(bytes)) in"), "\(result.stdout)")
        #expect(result.stdout.contains("the file system is full"))
        // Names as wide as the most files that could fit, not the ten digits of the upper bound.
        #expect(files.contains { $0.count < 10 } && Set(files.map(\.count)).count == 1, "\(files.prefix(3))")
        // Stamped: every file's bytes differ.
        #expect(try catalog.int("SELECT count(DISTINCT xxh128) FROM saves") == saved)
        let verify = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
        #expect(verify.status == 0, "\(verify.stdout)")
        #expect(verify.stdout.contains("\(saved) ok"))
    }

    /// A fill with its catalog on the file system it fills — a card that keeps its own record
    /// — ends as a fill: exit 0, every file with its row, the run completed, nothing left of the
    /// room kept for the catalog. (It ended "failed", exit 74: the catalog had no room for the
    /// last rows, "2543 saved file(s) have no catalog row".) On tmpfs the room is a file without
    /// a name; on exFAT through FUSE, which cannot make those, one unlinked at once.
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"), arguments: ["320x240", "64x48 --jobs 4"])
    func aFillWithItsCatalogOnTheFileSystemItFillsEndsAsAFill(_ options: String) throws {
        let dir = try TemporaryDirectory()
        let small = try SmallFileSystem(dir, size: "20m")
        try fillWithTheCatalogBeside(small.path, options: options.split(separator: " ").map(String.init))
    }

    @Test(.enabled(if: exfatThroughFUSE, "needs root, exfatprogs, exfat-fuse, a loop device and /dev/fuse"))
    func aFillWithItsCatalogOnAnExFATCardEndsAsAFill() throws {
        let dir = try TemporaryDirectory()
        try Self.withExFATCard(dir, megabytes: 24) { card in try fillWithTheCatalogBeside(card, options: ["320x240"]) }
    }

    private func fillWithTheCatalogBeside(_ card: String, options: [String]) throws {
        let catalog = card + "/c.sqlite3"
        let fill = try CamrollBinary.run(["-d", "pattern", "-r"] + options + ["--fill", "-o", card + "/p/{seq}.jpg", "--db", catalog])
        #expect(fill.status == 0 && fill.stdout.hasPrefix("filled "), "\(options): \(fill.stdout)\(fill.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: card + "/p")
        do {  // closed before verify: on a full card it holds the catalog alone, as camroll would
            let reader = try CatalogReader(catalog)
            #expect(try reader.text("SELECT status FROM runs") == "completed")
            #expect(try reader.int("SELECT count(*) FROM saves WHERE status = 'saved'") == files.count && files.count > 500, "\(files.count) files")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: card).filter { $0.hasPrefix(".") }
        #expect(left.isEmpty, "\(left)")
        let verify = try CamrollBinary.run(["verify", "--db", catalog])
        #expect(verify.status == 0 && verify.stdout.contains("verified \(files.count) files: \(files.count) ok"), "\(verify.stdout)")
    }

    /// A fill beside its catalog on a card with little room left keeps room for the catalog out
    /// of what there is (half of it, 256 kB at least), and where there is not even that, saves
    /// nothing: either way it ends as a fill, every file with its row, and says what it kept.
    /// (With 600 kB left it ended "failed after 70 files", exit 74, "70 saved file(s) have no
    /// catalog row", the run left open — and `verify --repair` had no room to add them.)
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"), arguments: [600, 200])
    func aFillBesideItsCatalogOnANearlyFullCardRecordsEveryFile(kilobytesLeft: Int) throws {
        let dir = try TemporaryDirectory()
        let small = try SmallFileSystem(dir, size: "20m")
        let catalog = small.path + "/c.sqlite3"
        let first = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-n", "3", "-o", small.path + "/a/{seq}.jpg", "--db", catalog])
        try #require(first.status == 0, "\(first.stderr)")
        try small.takeAllBut(kilobytesLeft << 10)

        let fill = try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "--fill", "-n", "10000", "-o", small.path + "/p/{seq}.jpg", "--db", catalog])
        #expect(fill.status == 0 && fill.stdout.hasPrefix("filled "), "\(fill.stdout)\(fill.stderr)")
        #expect(fill.stdout.contains(" kept for the catalog on it; "), "\(fill.stdout)")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: small.path + "/p")) ?? []
        #expect(kilobytesLeft < 256 ? files.isEmpty : files.count > 10, "\(files.count) files")
        do {  // closed before verify, as above
            let reader = try CatalogReader(catalog)
            #expect(try reader.text("SELECT status FROM runs WHERE id = 2") == "completed")
            #expect(try reader.int("SELECT count(*) FROM saves JOIN captures c ON c.id = capture_id WHERE c.run_id = 2 AND status = 'saved'") == files.count)
        }
        let verify = try CamrollBinary.run(["verify", "--db", catalog])
        #expect(verify.status == 0 && verify.stdout.contains("verified \(files.count + 3) files: \(files.count + 3) ok"), "\(verify.stdout)")
    }

    /// A run cut short with none of its rows committed — a small fill beside its catalog killed
    /// at its end, where it had kept room for them — is repaired in the room left: 3000 rows
    /// in 1 MB. (Repair committed each row on its own and let the log grow to 4 MB before
    /// copying it into the main file: "no space left on device", exit 74, with 2 MB free.)
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aRunCutShortOnANearlyFullCardIsRepairedInTheRoomLeft() throws {
        let dir = try TemporaryDirectory()
        let small = try SmallFileSystem(dir, size: "40m")
        let catalog = small.path + "/c.sqlite3"
        let run = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-n", "3000", "-o", small.path + "/p/{seq}.jpg", "--db", catalog])
        try #require(run.status == 0, "\(run.stderr)")
        // The state a process killed before its rows were committed leaves: the run open, no rows.
        try Database(path: catalog).execute("UPDATE runs SET status = 'running', pid = 999999; DELETE FROM saves")
        try small.takeAllBut(1 << 20)

        let repair = try CamrollBinary.run(["verify", "--repair", "--db", catalog])
        #expect(repair.status == 0 && repair.stdout.contains("1 interrupted run(s) closed, 3000 unrecorded file(s) recorded"),
                "\(repair.stdout)\(repair.stderr)")
        let verify = try CamrollBinary.run(["verify", "--db", catalog])
        #expect(verify.status == 0 && verify.stdout.contains("verified 3000 files: 3000 ok"), "\(verify.stdout)\(verify.stderr)")
    }

    /// A catalog on a card that is full — a fill beside it, then anything else that took the
    /// last bytes — is still verified, listed and repaired, with SQLite's WAL index (`-shm`)
    /// there or not (gone once the last connection to the catalog closed it, or after a fill of
    /// a btrfs card, which holds the catalog alone): where it is not, SQLite has no room to make
    /// it, so camroll holds the catalog alone too and keeps the index in memory. (Every command
    /// said "catalog …: I/O error: disk I/O error (No space left on device)", exit 74.) What
    /// needs a row written says there is no room and where to make it, and changes nothing.
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aCatalogOnAFullCardIsStillVerifiedListedAndRepaired() throws {
        let dir = try TemporaryDirectory()
        let small = try SmallFileSystem(dir, size: "20m")
        let card = small.path
        let catalog = card + "/c.sqlite3"
        // Bounded, as every fill of a test's should be: 2400 fit.
        let fill = try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "--fill", "-n", "10000", "-o", card + "/p/{seq}.jpg", "--db", catalog])
        try #require(fill.status == 0 && fill.stdout.hasPrefix("filled "), "\(fill.stdout)\(fill.stderr)")
        // The rest of the card, taken by something else.
        let rest = open(card + "/rest", O_WRONLY | O_CREAT, 0o644)
        let block = [UInt8](repeating: 0, count: 4096)
        while write(rest, block, block.count) > 0 {}
        close(rest)
        var info = statvfs()
        try #require(statvfs(card, &info) == 0 && info.f_bavail == 0)
        let saved = try FileManager.default.contentsOfDirectory(atPath: card + "/p").count

        for indexRemoved in [false, true] {
            // Closed and checkpointed: no process has it open, and the index can go.
            if indexRemoved && FileManager.default.fileExists(atPath: catalog + "-shm") {
                try FileManager.default.removeItem(atPath: catalog + "-shm")
            }
            let verify = try CamrollBinary.run(["verify", "--db", catalog])
            #expect(verify.status == 0 && verify.stdout.contains("verified \(saved) files: \(saved) ok"), "\(verify.stdout)\(verify.stderr)")
            let list = try CamrollBinary.run(["list", "--db", catalog, "--json"])
            #expect(list.status == 0 && list.stdout.contains("\"saved\":\(saved)"), "\(list.stdout)\(list.stderr)")
            let stats = try CamrollBinary.run(["stats", "--db", catalog])
            #expect(stats.status == 0, "\(stats.stderr)")
            let repair = try CamrollBinary.run(["verify", "--repair", "--db", catalog])
            #expect(repair.status == 0 && repair.stdout.contains("\(saved) ok"), "\(repair.stdout)\(repair.stderr)")
            let delete = try CamrollBinary.run(["delete", "--run", "1", "--db", catalog])
            #expect(delete.status == 74 && delete.stderr == "camroll: error: catalog \(catalog): no space left on device\n"
                    + "Make room on the file system that holds it (\(card)).\n", "\(delete.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: card + "/p").count == saved)
            let after = try CamrollBinary.run(["verify", "--db", catalog])
            #expect(after.status == 0 && after.stdout.contains("\(saved) ok"), "\(after.stdout)\(after.stderr)")
        }
        withExtendedLifetime(small) {}
    }

    /// A fill with its catalog beside it can be looked at while it runs: `list` and `stats`
    /// from another process read the catalog. (The fill held it alone, for a copy-on-write file
    /// system's sake, on every file system: "is locked by another process", 69; now only on
    /// btrfs.) Ctrl-C then ends it as any run, every file with its row.
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aFillBesideItsCatalogCanBeListedWhileItRuns() throws {
        let dir = try TemporaryDirectory()
        let small = try SmallFileSystem(dir, size: "200m")
        let catalog = small.path + "/c.sqlite3"
        // Slow: a frame every 5 ms, each saved once.
        let process = CamrollBinary.process(["-d", "pattern", "-r", "320x240", "--fill", "-n", "1", "--frames", "100000", "--interval", "5ms",
                                             "--quiet", "-o", small.path + "/p/{seq}.jpg", "--db", catalog])
        try process.run()
        var files = 0
        for _ in 0..<200 where files < 20 {
            usleep(20_000)
            files = ((try? FileManager.default.contentsOfDirectory(atPath: small.path + "/p")) ?? []).count
        }
        try #require(files >= 20 && process.isRunning, "\(files) files")
        let list = try CamrollBinary.run(["list", "--db", catalog, "--json"])
        #expect(list.status == 0 && list.stdout.contains("\"status\":\"running\""), "\(list.stdout)\(list.stderr)")
        let stats = try CamrollBinary.run(["stats", "--db", catalog])
        #expect(stats.status == 0 && stats.stdout.contains(" saves, "), "\(stats.stdout)\(stats.stderr)")
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationStatus == 130)
        let saved = try FileManager.default.contentsOfDirectory(atPath: small.path + "/p").count
        let verify = try CamrollBinary.run(["verify", "--db", catalog])
        #expect(verify.status == 0 && verify.stdout.contains("verified \(saved) files: \(saved) ok"), "\(verify.stdout)\(verify.stderr)")
    }

    /// A run of more photos than fit, not a fill, with its catalog on the file system it fills
    /// — a stress test of a card that keeps its own record, or of the home directory where the
    /// default catalog and photos both live — fails with the disk full (74), but every file it
    /// saved has its row and the run is closed; what is left of the room it kept for the catalog
    /// lets `delete` write its rows on the full disk. (The run was left open with 1049 files
    /// without a row, "verify --repair once the catalog can be written", and delete said "no
    /// space left on device": neither could write a row until room was made by hand.)
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"), arguments: ["320x240", "64x48 --jobs 4"])
    func aRunThatOverrunsTheDiskItsCatalogIsOnRecordsEveryFile(_ options: String) throws {
        let dir = try TemporaryDirectory()
        let small = try SmallFileSystem(dir, size: "20m")
        let catalog = small.path + "/c.sqlite3"
        let freeBefore = small.freeBytes
        let run = try CamrollBinary.run(["-d", "pattern", "-r"] + options.split(separator: " ").map(String.init)
                                        + ["-n", "100000", "-o", small.path + "/p/{seq}.jpg", "--db", catalog])
        // Whichever met the full disk first, a save or the catalog: "… while saving PATH", or
        // "… on MOUNT, which holds the photos and the catalog".
        #expect(run.status == 74 && run.stderr.hasPrefix("camroll: error: no space left on device ")
                && run.stderr.split(separator: "\n").count == 1, "\(run.stdout)\(run.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: small.path + "/p")
        do {  // closed before the commands below
            let reader = try CatalogReader(catalog)
            #expect(try reader.text("SELECT status FROM runs") == "failed")
            #expect(try reader.int("SELECT count(*) FROM saves WHERE status = 'saved'") == files.count && files.count > 1000,
                    "\(files.count) files")
        }
        // The run's end was written and its log copied into the catalog (it was not, where the
        // room kept was sized for shorter paths than these), and what is left of the room is free.
        let log = (try? FileManager.default.attributesOfItem(atPath: catalog + "-wal")[.size] as? Int) ?? 0
        #expect(log == 0 && small.freeBytes > 0, "\(log)-byte log, \(small.freeBytes) bytes left")
        // And the disk was filled: no more is free than the room kept (sized, as the run sized
        // it, for as many files as fit) and the log's pages, copied back at 1000 pages (4 MB) and
        // let go once the last copy was made. How many pages the log held when the disk filled
        // depends on how the rows were batched into commits: under load, fewer rows a commit,
        // more pages (a fixed 4 MB bound passed 3.7 MB on an idle machine, failed under load).
        let fileBytes = try #require(files.first.flatMap {
            try FileManager.default.attributesOfItem(atPath: small.path + "/p/" + $0)[.size] as? Int
        })
        let fileBlocks = (fileBytes + 4095) / 4096 * 4096
        let kept = try #require(SpaceReserve.size(files: min(100_000, freeBefore / fileBlocks),
                                                  pathBytes: (small.path + "/p/1.jpg").utf8.count + "100000".utf8.count, free: freeBefore))
        let logPages = 1000 * 4096 + (1 << 20)  // and one commit's past them
        #expect(small.freeBytes < kept + logPages, "\(small.freeBytes) bytes left, room kept \(kept)")
        let verify = try CamrollBinary.run(["verify", "--db", catalog])
        #expect(verify.status == 0 && verify.stdout.contains("verified \(files.count) files: \(files.count) ok")
                && !verify.stdout.contains("interrupted"), "\(verify.stdout)\(verify.stderr)")
        let delete = try CamrollBinary.run(["delete", "--run", "1", "--db", catalog])
        #expect(delete.status == 0 && delete.stdout.hasPrefix("deleted \(files.count) file(s)"), "\(delete.stdout)\(delete.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: small.path + "/p").isEmpty)
    }

    /// The room kept for the catalog is kept only where a run's files do not fit: a run that
    /// fits on a nearly full disk, beside its catalog, saves every photo. (Kept wherever the
    /// files and twice that room did not fit, 256 kB of the 300 left, it failed at its first
    /// photo.)
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aRunThatFitsOnANearlyFullDiskIsNotCutShortByTheRoomKeptForItsCatalog() throws {
        let dir = try TemporaryDirectory()
        let small = try SmallFileSystem(dir, size: "20m")
        let catalog = small.path + "/c.sqlite3"
        let first = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-o", small.path + "/a.jpg", "--db", catalog])
        try #require(first.status == 0, "\(first.stderr)")
        try small.takeAllBut(300 << 10)
        // Three photos of ~50 kB.
        let run = try CamrollBinary.run(["-d", "pattern", "-r", "1920x1080", "-q", "100", "-n", "3", "-o", small.path + "/p/{seq}.jpg",
                                         "--db", catalog])
        #expect(run.status == 0 && run.stdout.hasPrefix("saved 3/3 files"), "\(run.stdout)\(run.stderr)")
        #expect(try CatalogReader(catalog).int("SELECT count(*) FROM saves WHERE status = 'saved'") == 4)
    }

    /// An unbounded fill whose directory is on the root file system — a card not mounted, a typo
    /// — is warned of before it starts; one bounded with -n, or on a file system of its own, is
    /// not. (The fills here end at once: a file stands where their directory would be made.)
    @Test func anUnboundedFillOfTheRootFileSystemIsWarnedOf() throws {
        func mountPoint(_ path: String) throws -> String {  // as coreutils finds it, not as camroll does
            try CamrollBinary.runProgram(["/usr/bin/stat", "-c", "%m", path]).stdout.trimmingCharacters(in: .newlines)
        }
        let dir = try TemporaryDirectory()
        let warning = "camroll: warning: --fill will fill the root file system ("
        var triedOnRoot = false
        for (parent, onRoot) in [("/var/tmp", true), ("/tmp", true), ("/dev/shm", false)] {
            guard try mountPoint(parent) == (onRoot ? "/" : parent) else { continue }  // not so on this machine
            triedOnRoot = triedOnRoot || onRoot
            let blocker = parent + "/camroll-test-\(UUID().uuidString)"
            try Data().write(to: URL(fileURLWithPath: blocker))
            defer { try? FileManager.default.removeItem(atPath: blocker) }
            for bound in [[], ["-n", "5"]] {
                let fill = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "--fill", "-o", blocker + "/fill/{seq}.jpg",
                                                  "--db", dir.file("c.sqlite3")] + bound)
                #expect(fill.status == 73, "\(fill.stderr)")
                // Still a fill, whose upper bound is not a total: "0 files", not "0/1000000000".
                #expect(fill.stdout.hasPrefix("failed after 0 files, "), "\(fill.stdout)")
                #expect(fill.stderr.hasPrefix(warning) == (onRoot && bound.isEmpty), "\(parent) \(bound): \(fill.stderr)")
                if onRoot && bound.isEmpty {
                    #expect(fill.stderr.contains("): \(blocker)/fill is on it, not on a card or disk of its own (is it mounted?)"), "\(fill.stderr)")
                }
            }
        }
        #expect(triedOnRoot, "neither /var/tmp nor /tmp is on the root file system here")
    }

    /// What a fake-capacity card does, played on the files themselves: the run's files laid one
    /// after another in whole blocks, as a file system lays them, on a device that keeps only
    /// `capacity` bytes, every write past it landing at its position modulo the capacity.
    /// Reading back, the early files hold later ones; verify calls them overwritten, counts the
    /// data as f3read does, and finds the capacity — whether the device wraps in the middle of a
    /// file (the early files hold parts of later ones, stamps and all) or at a file's start (the
    /// stamped copies of one frame are all one size: each early file then holds a later one
    /// whole). On a tmpfs (/dev/shm), which does not say where files lie (no FIEMAP), so that
    /// verify lays the files out in write order as this simulation does; where the file system
    /// says, verify uses the real places (the VM's fake-card scenario, on ext4 over device-mapper).
    @Test(.enabled(if: FileManager.default.isWritableFile(atPath: "/dev/shm"), "needs the /dev/shm tmpfs"))
    func verifyFindsWhereADeviceWrapsAroundAndItsRealCapacity() throws {
        let dir = try TemporaryDirectory(in: "/dev/shm")
        let run = try CamrollBinary.run(
            ["-d", "pattern", "-r", "320x240", "-n", "120", "--stamp", "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3"),
             "--quiet"])
        #expect(run.status == 0, "\(run.stderr)")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        let statement = try catalog.database.prepare("SELECT path, bytes FROM saves ORDER BY seq")
        var files: [(path: String, bytes: Int, offset: Int)] = []
        var info = statvfs()
        try #require(statvfs(dir.file("out"), &info) == 0)
        let block = Int(info.f_frsize)
        var stream: [UInt8] = []
        while try statement.step() {
            let path = statement.text(0) ?? ""
            files.append((path, statement.int(1), stream.count))
            stream += try fileBytes(path)
            stream += [UInt8](repeating: 0, count: (block - stream.count % block) % block)
        }
        // The blocks one file takes: one frame's copies, one size.
        let span = files[1].offset - files[0].offset
        #expect(files.allSatisfy { $0.offset % span == 0 } && span % block == 0)
        let aboutThreeFifths = stream.count * 3 / 5
        let midFile = (aboutThreeFifths / span * span) + block  // a block into a file
        let atAFileStart = aboutThreeFifths / span * span
        for (capacity, found) in [(midFile, "holds the start of save "), (atAFileStart, "holds the content of ")] {
            var device = [UInt8](stream[0..<capacity])
            for position in capacity..<stream.count { device[position % capacity] = stream[position] }
            var overwritten = 0, overwrittenBytes = 0, total = 0
            for file in files {
                let readBack = (file.offset..<(file.offset + file.bytes)).map { device[$0 % capacity] }
                if readBack != Array(stream[file.offset..<(file.offset + file.bytes)]) {
                    overwritten += 1
                    overwrittenBytes += file.bytes
                }
                try Data(readBack).write(to: URL(fileURLWithPath: file.path))
                total += file.bytes
            }
            #expect(overwritten > 20)

            let verify = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
            #expect(verify.status == 1)
            #expect(verify.stdout.contains("\(files.count - overwritten) ok, 0 corrupt, 0 missing, \(overwritten) aliased"), "\(verify.stdout)")
            #expect(verify.stdout.contains(found), "\(verify.stdout)")
            #expect(verify.stdout.contains(
                "data: \(Units.bytes(total - overwrittenBytes)) ok, 0 B lost, 0 B corrupted, \(Units.bytes(overwrittenBytes)) overwritten"),
                "\(verify.stdout)")
            #expect(verify.stdout.contains("it holds about \(Units.bytes(capacity))"), "\(verify.stdout)")
            // Read by three jobs at once: the same verdict.
            let json = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3"), "--json", "--jobs", "3"])
            let summary = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            #expect(summary["estimated_capacity_bytes"] as? Int == capacity)
            #expect((summary["data"] as? [String: Any])?["overwritten_bytes"] as? Int == overwrittenBytes)
            #expect(summary["aliased"] as? Int == overwritten && summary["ok"] as? Int == files.count - overwritten)
        }
    }

    /// `--jobs 4`: four writers, every copy saved once under its own sequence number, each row
    /// saying which writer saved it; the summary and `stats` give each writer's rate.
    @Test func fourJobsSaveEveryCopyOnceAndSayWhichJobSavedIt() throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.run(
            ["-d", "pattern", "-r", "160x120", "-n", "400", "--jobs", "4", "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(dir.files(in: "out", suffix: ".jpg").count == 400)
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(DISTINCT seq) FROM saves WHERE seq BETWEEN 1 AND 400") == 400)
        #expect(try catalog.int("SELECT count(DISTINCT job) FROM saves WHERE job BETWEEN 1 AND 4") >= 2)
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE job IS NULL") == 0)
        #expect(result.stdout.contains("4 jobs: 1: "), "\(result.stdout)")
        let stats = try CamrollBinary.run(["stats", "--db", dir.file("c.sqlite3")])
        #expect(stats.stdout.contains(" jobs: 1: "), "\(stats.stdout)")
        let verify = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
        #expect(verify.status == 0 && verify.stdout.contains("400 ok"), "\(verify.stdout)")
    }

    /// A fill with four writers: whichever meets ENOSPC first ends the run for all; no partial
    /// file, every file its row.
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aFillWithFourJobsEndsCleanlyWhenTheFileSystemIsFull() throws {
        let dir = try TemporaryDirectory()
        let small = try SmallFileSystem(dir, size: "4m")
        let result = try CamrollBinary.run(
            ["-d", "pattern", "-r", "320x240", "--fill", "--jobs", "4", "-o", small.path + "/{seq}.jpg", "--db", dir.file("c.sqlite3")])
        #expect(result.status == 0, "\(result.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: small.path)
        #expect(files.allSatisfy { !$0.hasPrefix(".") }, "partial temporary file left: \(files)")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved'") == files.count)
        #expect(try catalog.text("SELECT status FROM runs") == "completed")
        #expect(small.freeBytes < (try catalog.int("SELECT max(bytes) FROM saves")) + 4096)
        let verify = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
        #expect(verify.status == 0, "\(verify.stdout)")
        // Without --fill, the same full disk is an error, exit 74, with the same consistency.
        let again = try CamrollBinary.run(
            ["-d", "pattern", "-r", "320x240", "-n", "100", "--jobs", "4", "-o", small.path + "/more-{seq}.jpg",
             "--db", dir.file("c.sqlite3")])
        #expect(again.status == 74 && again.stderr.contains("no space left on device"), "\(again.stderr)")
        let after = try FileManager.default.contentsOfDirectory(atPath: small.path)
        #expect(after.allSatisfy { !$0.hasPrefix(".") })
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved'") == after.count)
    }

    /// A catalog made where SQLite can make the database but not its -wal and -shm files (no
    /// inode left): said so, 73. (It said "unable to open database file (No such file or
    /// directory)": SQLite's last errno.)
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aCatalogWhereNoInodeIsLeftSaysSo() throws {
        let dir = try TemporaryDirectory()
        // The root directory, the database and its -wal: no -shm.
        let small = try SmallFileSystem(dir, size: "2m", inodes: 3)
        let result = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-o", dir.file("a.jpg"), "--db", small.path + "/c.sqlite3"])
        #expect(result.status == 73 && result.stderr.hasPrefix("camroll: error: cannot open catalog \(small.path)/c.sqlite3 for writing: "
                                                                 + "unable to open database file (its file system has no inode left for another file)\n"),
                "\(result.status) \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("a.jpg")))
    }

    /// A file system out of inodes with most of its space free says ENOSPC too, but it is not
    /// full: a fill that ended there "filled" would claim a capacity it never reached. It is an
    /// error (73) that says what ran out; every file saved is kept and recorded.
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aFileSystemOutOfInodesIsNotFull() throws {
        let dir = try TemporaryDirectory()
        let small = try SmallFileSystem(dir, size: "8m", inodes: 40)
        for fill in [true, false] {
            let result = try CamrollBinary.run(
                ["-d", "pattern", "-r", "160x120", "-n", "100", "-o", small.path + "/\(fill)-{seq}.jpg", "--db", dir.file("c.sqlite3")]
                    + (fill ? ["--fill"] : []))
            #expect(result.status == 73, "\(result.stdout)\(result.stderr)")
            #expect(!result.stdout.contains("filled") && !result.stdout.contains("is full"), "\(result.stdout)")
            #expect(result.stderr.contains("the file system has no inode left for another file, though "), "\(result.stderr)")
            #expect(result.stderr.contains("MB is free"), "\(result.stderr)")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: small.path)
        #expect(files.allSatisfy { !$0.hasPrefix(".") }, "partial temporary file left: \(files)")
        #expect(small.freeBytes > 7_000_000)
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved'") == files.count && files.count > 30)
        let verify = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
        #expect(verify.status == 0 && verify.stdout.contains("\(files.count) ok"), "\(verify.stdout)")
    }

    /// A card whose write-protect switch is on, as the kernel mounts it (read-only): the photos'
    /// directory and a catalog there both say "Read-only file system" (SQLite alone would say
    /// "unable to open database file", or name ENOENT, its last try), exit 73.
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aReadOnlyCardSaysSo() throws {
        let dir = try TemporaryDirectory()
        let card = try SmallFileSystem(dir, size: "1m", readOnly: true)
        let photos = try CamrollBinary.run(["-d", "pattern", "-r", "160x120", "-o", card.path + "/{seq}.jpg", "--db", dir.file("c.sqlite3")])
        #expect(photos.status == 73 && photos.stderr.hasPrefix("camroll: error: cannot write to directory \(card.path): Read-only file system\n"),
                "\(photos.stderr)")
        let catalog = try CamrollBinary.run(["-d", "pattern", "-r", "160x120", "-o", dir.file("out/{seq}.jpg"), "--db", card.path + "/c.sqlite3"])
        #expect(catalog.status == 73 && catalog.stderr.hasPrefix(
            "camroll: error: cannot open catalog \(card.path)/c.sqlite3 for writing: unable to open database file (Read-only file system)\n"),
            "\(catalog.stderr)")
        #expect(dir.files(in: "out", suffix: ".jpg").isEmpty)
    }

    /// A run killed (SIGKILL) while it writes leaves no temporary file where the file system
    /// makes files without names (tmpfs here; ext4, XFS, btrfs): the file being written never
    /// had a name. (With temporary names, 12 killed runs of the interruption test left 24.)
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aKilledRunLeavesNoTemporaryFile() throws {
        let dir = try TemporaryDirectory()
        let small = try SmallFileSystem(dir, size: "1g")
        for round in 1...6 {
            let out = small.path + "/\(round)"
            let (process, _) = try CamrollBinary.startSaving(
                ["-d", "pattern", "-r", "1920x1080", "-n", "100000", "--jobs", round % 2 == 0 ? "2" : "1", "--json",
                 "-o", out + "/{seq}.jpg", "--db", dir.file("c.sqlite3")])
            // Killed while it writes: once its first file is there (a loaded machine can take
            // longer than any fixed wait to encode the frame), a moment later.
            let deadline = Date().addingTimeInterval(20)
            while ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).isEmpty && Date() < deadline { usleep(1_000) }
            usleep(UInt32.random(in: 0...30_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let names = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
            #expect(!names.isEmpty && names.allSatisfy { !$0.hasPrefix(".") }, "round \(round): \(names.filter { $0.hasPrefix(".") })")
            try? FileManager.default.removeItem(atPath: out)
        }
        let repair = try CamrollBinary.run(["verify", "--repair", "--db", dir.file("c.sqlite3")])
        #expect(repair.status == 0 && repair.stdout.contains(" 0 temporary file(s) removed"), "\(repair.stdout)")
    }

    /// A card written with its catalog on it, then write-protected: it is listed and verified
    /// as it is; a command that would write says the file system is read-only (SQLite alone
    /// said "attempt to write a readonly database", or named ENOENT, its last try, where the
    /// -wal and -shm beside the catalog could not be made).
    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func aCatalogOnAWriteProtectedCardIsReadAndNotWritten() throws {
        let dir = try TemporaryDirectory()
        let card = try SmallFileSystem(dir, size: "4m")
        let catalogPath = card.path + "/c.sqlite3"
        let made = try CamrollBinary.run(["-d", "pattern", "-r", "160x120", "-n", "3", "-o", card.path + "/{seq}.jpg", "--db", catalogPath])
        try #require(made.status == 0, "\(made.stderr)")
        for withoutIndex in [false, true] {
            if withoutIndex {
                // As another machine's SQLite leaves it: the WAL checkpointed, no -wal, no -shm.
                _ = try CamrollBinary.runProgram(["/bin/mount", "-o", "remount,rw", card.path])
                try Database(path: catalogPath).execute("PRAGMA wal_checkpoint(TRUNCATE)")
                for name in ["c.sqlite3-wal", "c.sqlite3-shm"] { try? FileManager.default.removeItem(atPath: card.path + "/" + name) }
            }
            try card.remountReadOnly()
            let verify = try CamrollBinary.run(["verify", "--db", catalogPath])
            #expect(verify.status == 0 && verify.stdout.contains("3 ok"), "\(verify.stdout)\(verify.stderr)")
            let list = try CamrollBinary.run(["list", "--db", catalogPath])
            #expect(list.status == 0 && list.stdout.contains("completed"), "\(list.stdout)\(list.stderr)")
            for command in [["-d", "pattern", "-r", "160x120", "-o", dir.file("out/{seq}.jpg")], ["delete", "--run", "1"]] {
                let result = try CamrollBinary.run(command + ["--db", catalogPath])
                let firstLine = result.stderr.split(separator: "\n").first ?? ""
                #expect(result.status == 73 && firstLine.hasPrefix("camroll: error: cannot open ") && firstLine.contains("Read-only file system"),
                        "\(withoutIndex) \(command): \(result.stderr)")
            }
        }
        #expect(dir.files(in: "out", suffix: ".jpg").isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: card.path).filter { $0.hasSuffix(".jpg") }.count == 3)
    }

    /// `--direct`: whole blocks with O_DIRECT from an aligned copy, the last partial block through
    /// the page cache; every file reads back as recorded, stamped copies (sizes not a multiple
    /// of the block) and two jobs included.
    @Test func directWritesReadBackIntact() throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.run(
            ["-d", "pattern", "-r", "640x480", "-n", "60", "--stamp", "--direct", "--jobs", "2", "-o", dir.file("out/{seq}.jpg"),
             "--db", dir.file("c.sqlite3")])
        #expect(result.status == 0, "\(result.stderr)")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE bytes % 4096 != 0") > 0)
        let verify = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
        #expect(verify.status == 0 && verify.stdout.contains("60 ok"), "\(verify.stdout)")
        for path in dir.files(in: "out", suffix: ".jpg").prefix(3) {
            #expect(try JPEGDecoder().decodeRGB(fileBytes(path)).0 == JPEGDecoder.Header(width: 640, height: 480))
        }
    }

    /// `-n` bounds a fill; on a file system with room, it stops there like any run.
    @Test func aFillStopsAtTheCountGiven() throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.run(
            ["-d", "pattern", "-r", "64x48", "--fill", "-n", "7", "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3"),
             "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(dir.files(in: "out", suffix: ".jpg").count == 7)
        #expect(result.stdout.contains("\"event\":\"summary\"") && !result.stdout.contains("\"filled\""))
        #expect(result.stdout.contains("\"free_bytes\""))
        // The bound is not a total: the count stands alone in the summary.
        let text = try CamrollBinary.run(
            ["-d", "pattern", "-r", "64x48", "--fill", "-n", "3", "-o", dir.file("text/{seq}.jpg"), "--db", dir.file("c.sqlite3")])
        #expect(text.status == 0 && text.stdout.hasPrefix("saved 3 files, "), "\(text.stdout)")
        let pick = try CamrollBinary.run(["pick", "-d", "pattern", "--fill"])
        #expect(pick.status == 64 && pick.stderr.contains("'--fill' is not an option of 'camroll pick'")
                && pick.stderr.contains("camroll snap --fill"), "\(pick.stderr)")
    }
}

/// `stats`: the run in time, in the terminal, as SVG and as PNG.
@Suite struct RunChartTests {
    @Test func statsDrawsThroughputOverTimeAndWritesTheChartsAsSVG() throws {
        let dir = try TemporaryDirectory()
        let run = try CamrollBinary.run(
            ["-d", "pattern", "-r", "320x240", "-n", "300", "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3"), "--quiet"])
        #expect(run.status == 0, "\(run.stderr)")
        let stats = try CamrollBinary.run(["stats", "--db", dir.file("c.sqlite3"), "--plot", dir.file("run.svg")])
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(stats.stdout.contains("throughput over run 1's time:"), "\(stats.stdout)")
        // Six rows of bars with the peak rate on the first (its unit whole, however high: a
        // slice of this short run can pass 1 GB/s), the axis, the time labels.
        let chart = stats.stdout.split(separator: "\n").drop { !$0.hasPrefix("throughput over run") }.dropFirst()
        #expect(chart.prefix(6).allSatisfy { $0.contains("│") }, "\(chart)")
        #expect(chart.first.map { $0.contains(try! Regex("^[0-9.]+ [kMG]?B/s +│")) } == true, "\(chart)")
        #expect(chart.prefix(6).joined().contains("█"))
        #expect(stats.stdout.contains("charts of run 1 written to \(dir.file("run.svg"))"))
        let svg = String(decoding: try fileBytes(dir.file("run.svg")), as: UTF8.self)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\"") && svg.hasSuffix("</svg>\n"))
        #expect(svg.contains("camroll run 1: 300 saves"))
        for title in ["save latency over time", "throughput over time", "save latency histogram"] { #expect(svg.contains(title)) }
        #expect(svg.components(separatedBy: "<polyline").count == 3)  // median and p99
        #expect(svg.contains("<polygon"))
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        let durations = try catalog.database.prepare("SELECT duration_us FROM saves ORDER BY duration_us")
        var sorted: [Int] = []
        while try durations.step() { sorted.append(durations.int(0)) }
        // One bar per histogram bucket, each as tall as its count.
        #expect(svg.components(separatedBy: "fill=\"#9467bd\"").count - 1 == LatencyBuckets(sorted).buckets.count)

        // With --json too, the plot is written and named.
        let json = try CamrollBinary.run(["stats", "--db", dir.file("c.sqlite3"), "--plot", dir.file("json.svg"), "--json"])
        #expect(json.stdout.contains("\"plot\":\"\(dir.file("json.svg"))\""), "\(json.stdout)")
        #expect(FileManager.default.fileExists(atPath: dir.file("json.svg")))

        let gif = try CamrollBinary.run(["stats", "--db", dir.file("c.sqlite3"), "--plot", dir.file("run.gif")])
        #expect(gif.status == 64 && gif.stderr.contains("ending in .svg or .png"), "\(gif.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("run.gif")))
    }

    /// Saves that the catalog's millisecond timestamps cannot tell apart — 50 small files in
    /// one millisecond, 10 µs each — are drawn one after another, over half of the chart's
    /// millisecond (30 of its 60 columns), not all at its start (one column: 50 files' bytes in
    /// 17 µs, tens of GB/s); and with two writers, each writer's own one after another (the
    /// busier writer's count × 10 µs).
    @Test func savesWithinOneMillisecondAreDrawnOneAfterAnother() throws {
        let dir = try TemporaryDirectory()
        for (jobs, catalog) in [(1, "one.sqlite3"), (2, "two.sqlite3")] {
            let run = try CamrollBinary.run(
                ["-d", "pattern", "-r", "64x48", "-n", "50", "--jobs", "\(jobs)", "-o", dir.file("\(jobs)/{seq}.jpg"),
                 "--db", dir.file(catalog), "--quiet"])
            #expect(run.status == 0, "\(run.stderr)")
            let database = try Database(path: dir.file(catalog))
            try database.execute("UPDATE saves SET saved_at = (SELECT min(saved_at) FROM saves), duration_us = 10")
            let busiest = try database.prepare("SELECT max(n) FROM (SELECT count(*) AS n FROM saves GROUP BY job)").firstInt()
            #expect(jobs == 1 ? busiest == 50 : (25...50).contains(busiest ?? 0), "\(busiest ?? 0)")
            let stats = try CamrollBinary.run(["stats", "--db", dir.file(catalog)])
            #expect(stats.status == 0, "\(stats.stderr)")
            let chart = Array(stats.stdout.split(separator: "\n").drop { !$0.hasPrefix("throughput over run") })
            #expect(chart.count >= 9 && chart[8].hasSuffix(" 1.00 ms"), "\(stats.stdout)")
            // The bottom row: a bar (of any height) in each column where a save ended.
            let columns = chart.count >= 7 ? Array(chart[6].split(separator: "│", maxSplits: 1).last ?? "") : []
            let ended = Set(columns.indices.filter { columns[$0] != " " })
            let expected = Double(busiest ?? 0) * 10 / 1000 * Double(columns.count)
            #expect(columns.count == 60 && Double(ended.count) >= 0.8 * expected && ended.max().map { Double($0) < expected + 2 } == true,
                    "\(ended.sorted()) of \(columns.count), \(expected) expected: \(stats.stdout)")
        }
    }

    /// A run of one save: "1 save", the histogram's count axis 0 and 1 (not 0, 1, 1), and the
    /// time axis's last label ending at the frame, not cut off by the picture's edge.
    @Test func aOneSaveRunIsDrawnWithoutRepeatedOrCutLabels() throws {
        let dir = try TemporaryDirectory()
        let run = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-o", dir.file("a.jpg"), "--db", dir.file("c.sqlite3"), "--quiet"])
        #expect(run.status == 0, "\(run.stderr)")
        // A save of exactly 1 ms, so that the time axis's last tick is its end (a loaded machine
        // took 1.24 ms once: the 1 ms label then stood clear of the edge, in the middle).
        try Database(path: dir.file("c.sqlite3")).execute("UPDATE saves SET duration_us = 1000")
        let stats = try CamrollBinary.run(["stats", "--db", dir.file("c.sqlite3"), "--plot", dir.file("one.svg")])
        #expect(stats.status == 0, "\(stats.stderr)")
        let svg = String(decoding: try fileBytes(dir.file("one.svg")), as: UTF8.self)
        #expect(svg.contains("camroll run 1: 1 save, "))
        let histogram = svg.components(separatedBy: "save latency histogram")[1]
        let countLabels = histogram.split(separator: "\n").filter { $0.contains("text-anchor=\"end\"") && !$0.contains("≤") }
        #expect(countLabels.map { $0.split(separator: ">")[1].prefix { $0 != "<" } } == ["0", "1"], "\(countLabels)")
        let timeAxis = svg.components(separatedBy: "throughput over time")[1].components(separatedBy: "<polygon")[0]
        let lastTimeLabel = timeAxis.split(separator: "\n").last { $0.hasPrefix("<text") && $0.contains("s</text>") }
        #expect(lastTimeLabel?.contains("text-anchor=\"end\"") == true, "\(lastTimeLabel ?? "")")
    }

    /// The PNG is the SVG drawn by librsvg at twice its size: decoded here, each chart's colour
    /// is in its own panel and nowhere else, the title's text is drawn, the background white.
    @Test func statsWritesTheChartsAsPNGDrawnFromTheSVG() throws {
        let dir = try TemporaryDirectory()
        let run = try CamrollBinary.run(
            ["-d", "pattern", "-r", "320x240", "-n", "300", "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3"), "--quiet"])
        #expect(run.status == 0, "\(run.stderr)")
        let stats = try CamrollBinary.run(["stats", "--db", dir.file("c.sqlite3"), "--plot", dir.file("run.PNG"), "--json"])
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(stats.stdout.contains("\"plot\":\"\(dir.file("run.PNG"))\""), "\(stats.stdout)")
        let image = try PNGDecoder.decode(try fileBytes(dir.file("run.PNG")), subject: "run.PNG")
        #expect(image.width == 1920 && image.height == Int(RunPlot.height) * 2)

        // Rows of the three panels (latency, throughput, histogram) at twice the SVG's scale.
        let panels = (0..<3).map { index -> Range<Int> in
            let top = Int(RunPlot.top + Double(index) * (RunPlot.panelHeight + RunPlot.gap)) * 2
            return top..<(top + Int(RunPlot.panelHeight) * 2)
        }
        func count(in rows: Range<Int>, _ matches: (Int, Int, Int) -> Bool) -> Int {
            var found = 0
            for y in rows {
                for x in 0..<image.width {
                    let at = (y * image.width + x) * 3
                    if matches(Int(image.pixels[at]), Int(image.pixels[at + 1]), Int(image.pixels[at + 2])) { found += 1 }
                }
            }
            return found
        }
        let purple = { (r: Int, g: Int, b: Int) in r == 0x94 && g == 0x67 && b == 0xbd }  // histogram bars
        let green = { (r: Int, g: Int, b: Int) in g > r + 60 && g > b + 60 }  // throughput area
        let blue = { (r: Int, g: Int, b: Int) in b > r + 80 && b > g + 30 }  // latency median
        #expect(count(in: panels[2], purple) > 1000)
        #expect(count(in: panels[0], purple) == 0 && count(in: panels[1], purple) == 0)
        #expect(count(in: panels[1], green) > 1000)
        #expect(count(in: panels[0], green) == 0 && count(in: panels[2], green) == 0)
        #expect(count(in: panels[0], blue) > 100)
        #expect(count(in: panels[1], blue) == 0 && count(in: panels[2], blue) == 0)
        #expect(count(in: 0..<60) { r, g, b in r < 80 && g < 80 && b < 80 } > 500)  // the title
        #expect(Array(image.pixels[0..<3]) == [255, 255, 255])
    }
}

extension StorageTests {
    static let diskFileSystems: [(type: String, mkfs: [String])] = [
        ("ext4", ["/usr/sbin/mkfs.ext4", "-q", "-F"]), ("xfs", ["/usr/sbin/mkfs.xfs", "-q"]), ("btrfs", ["/usr/sbin/mkfs.btrfs", "-q"]),
    ]

    static var diskFileSystemsOnLoopDevices: Bool {
        getuid() == 0 && diskFileSystems.allSatisfy { FileManager.default.isExecutableFile(atPath: $0.mkfs[0]) }
            && FileManager.default.isExecutableFile(atPath: "/usr/sbin/losetup")
    }

    /// A fill ends as full on Linux's own file systems, which near their end refuse a new file
    /// with a little space left for their own records (XFS: 180 kB of 320 MB, for inodes): that
    /// is full, exit 0, not "no more names" — only a file system with much space free (1% or
    /// more) that takes no more files is that (see aFileSystemOutOfInodesIsNotFull, and the VM's
    /// FAT16 card). Full is what is still full once the page cache is written out: XFS holds
    /// several times a small photo's size for each one not yet written, and refuses a new name
    /// when those holds take what is free.
    @Test(.enabled(if: diskFileSystemsOnLoopDevices, "needs root, losetup, e2fsprogs, xfsprogs and btrfs-progs"),
          arguments: ["1280x720", "640x480"])
    func aFillEndsAsFullOnExt4XFSAndBtrfs(_ size: String) throws {
        for (type, mkfs) in Self.diskFileSystems {
            let dir = try TemporaryDirectory()
            try Self.withDiskFileSystem(type, mkfs, in: dir) { disk in try fillEndsAsFull(type, disk, dir, size) }
        }
    }

    /// Runs `body` with a 300 MB file system of `type` (made with `mkfs`) mounted through a loop
    /// device at `dir/disk` (300 MB: XFS makes nothing smaller); unmounted after.
    static func withDiskFileSystem(_ type: String, _ mkfs: [String], in dir: TemporaryDirectory,
                                   _ body: (_ disk: String) throws -> Void) throws {
        let image = dir.file("disk.img"), disk = dir.file("disk")
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: false)
        try #require(FileManager.default.createFile(atPath: image, contents: nil) && truncate(image, 300 << 20) == 0)
        let made = try CamrollBinary.runProgram(mkfs + [image])
        try #require(made.status == 0, "\(type): \(made.stderr)")
        let mounted = try CamrollBinary.runProgram(["/bin/mount", "-t", type, "-o", "loop", image, disk])
        try #require(mounted.status == 0, "\(type): \(mounted.stderr)")
        defer { _ = try? CamrollBinary.runProgram(["/bin/umount", disk]) }
        try body(disk)
    }

    private func fillEndsAsFull(_ type: String, _ disk: String, _ dir: TemporaryDirectory, _ size: String) throws {
        var empty = statvfs()
        try #require(statvfs(disk, &empty) == 0)
        let availableBefore = Int(empty.f_bavail) * Int(empty.f_frsize)
        let fill = try CamrollBinary.run(
            ["-d", "pattern", "-r", size, "--fill", "-n", "100000", "-o", disk + "/{seq}.jpg", "--db", dir.file("c.sqlite3")])
        #expect(fill.status == 0 && fill.stdout.hasPrefix("filled ") && fill.stdout.contains("the file system is full"),
                "\(type): \(fill.stdout)\(fill.stderr)")
        let saved = try CatalogReader(dir.file("c.sqlite3")).int("SELECT count(*) FROM saves WHERE status = 'saved'")
        let files = try FileManager.default.contentsOfDirectory(atPath: disk).filter { $0.hasSuffix(".jpg") }.count
        #expect(saved == files && saved > 5000, "\(type): \(saved) rows, \(files) files")
        // The photos take the space, written out too. Fills that said "full" early on XFS left
        // 138 MB of 224 free here (640x480: the holds refused a name), and half of it (files
        // without names refused for want of space while named ones were still made).
        sync()
        var info = statvfs()
        let left = statvfs(disk, &info) == 0 ? Int(info.f_bavail) * Int(info.f_frsize) : -1
        #expect(left >= 0 && left < availableBefore / 100, "\(type) \(size): \(left) bytes free of \(availableBefore) once written out")
        let verify = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
        #expect(verify.status == 0 && verify.stdout.contains("\(saved) ok"), "\(type): \(verify.stdout)")
    }

    /// A run that is not a fill meets the same holds on XFS: it said "no space left on device"
    /// at 6893 files with 138 MB of 224 free once written out. A save refused for space is
    /// tried again once the file system has written out what the page cache holds.
    @Test(.enabled(if: diskFileSystemsOnLoopDevices, "needs root, losetup, e2fsprogs, xfsprogs and btrfs-progs"))
    func aRunOnXFSSavesUntilTheDiskIsReallyFull() throws {
        let dir = try TemporaryDirectory()
        try Self.withDiskFileSystem("xfs", ["/usr/sbin/mkfs.xfs", "-q"], in: dir) { disk in
            var empty = statvfs()
            try #require(statvfs(disk, &empty) == 0)
            let run = try CamrollBinary.run(["-d", "pattern", "-r", "640x480", "-n", "100000", "-o", disk + "/{seq}.jpg",
                                             "--db", dir.file("c.sqlite3"), "--quiet"])
            #expect(run.status == 74 && run.stderr.hasPrefix("camroll: error: no space left on device while saving "), "\(run.stderr)")
            sync()
            var info = statvfs()
            #expect(statvfs(disk, &info) == 0 && info.f_bavail < empty.f_bavail / 100,
                    "\(Int(info.f_bavail) * Int(info.f_frsize)) bytes free of \(Int(empty.f_bavail) * Int(empty.f_frsize)) once written out")
            let saved = try CatalogReader(dir.file("c.sqlite3")).int("SELECT count(*) FROM saves WHERE status = 'saved'")
            #expect(saved == (try FileManager.default.contentsOfDirectory(atPath: disk).filter { $0.hasSuffix(".jpg") }.count))
        }
    }

    /// A run that is not a fill, filling the btrfs its catalog is on: SQLite's write into the
    /// WAL index it maps from that disk can find no room, and the kernel sends SIGBUS, which
    /// killed camroll ("Bus error", 4 runs of 4), then ended it with a one-line error (4 runs of
    /// 6). Now the handler gives back the room kept for the catalog and the write goes on: "no
    /// space left on device", 74, every file recorded (8 runs of 8 of the release build; 6 of 8
    /// of the slower debug build, where a second SIGBUS ended 2 as before). Repair and delete
    /// then write their rows on the full disk. (Both had no room: the SIGBUS again, until room
    /// was made by hand.)
    @Test(.enabled(if: diskFileSystemsOnLoopDevices, "needs root, losetup, e2fsprogs, xfsprogs and btrfs-progs"))
    func aRunFillingItsCatalogsBtrfsEndsWithAnError() throws {
        let dir = try TemporaryDirectory()
        try Self.withDiskFileSystem("btrfs", ["/usr/sbin/mkfs.btrfs", "-q"], in: dir) { disk in
            let catalog = disk + "/c.sqlite3"
            let run = try CamrollBinary.run(["-d", "pattern", "-r", "640x480", "-n", "100000", "-o", disk + "/p/{seq}.jpg",
                                             "--db", catalog, "--quiet"], environment: ["SWIFT_BACKTRACE": "enable=no"])
            #expect(run.status == 74 && run.stderr.hasPrefix("camroll: error: ") && !run.stderr.contains("crash"), "\(run.status) \(run.stderr)")
            let files = try FileManager.default.contentsOfDirectory(atPath: disk + "/p").count
            // A save met the full disk first, or the catalog did (its WAL index, given the room):
            // the run ended as on any file system. (Or a second SIGBUS came, which the room
            // given back did not prevent: the run is left for repair, as before.)
            if run.stderr.hasPrefix("camroll: error: no space left on device ") {
                let reader = try CatalogReader(catalog)
                #expect(try reader.text("SELECT status FROM runs") == "failed")
                #expect(try reader.int("SELECT count(*) FROM saves WHERE status = 'saved'") == files, "\(files) files")
            }
            let repair = try CamrollBinary.run(["verify", "--repair", "--db", catalog], environment: ["SWIFT_BACKTRACE": "enable=no"])
            #expect(repair.status == 0 && repair.stdout.contains("\(files) ok"), "\(repair.stdout)\(repair.stderr)")
            let delete = try CamrollBinary.run(["delete", "--run", "1", "--db", catalog], environment: ["SWIFT_BACKTRACE": "enable=no"])
            #expect(delete.status == 0 && delete.stdout.hasPrefix("deleted \(files) file(s)"), "\(delete.stdout)\(delete.stderr)")
        }
    }

    /// The same with the catalog on the disk it fills. On btrfs, which writes every change
    /// anew (copy on write), SQLite's write into the WAL index it maps from the full disk killed
    /// the process ("Bus error"); the catalog of such a fill keeps that index in memory.
    @Test(.enabled(if: diskFileSystemsOnLoopDevices, "needs root, losetup, e2fsprogs, xfsprogs and btrfs-progs"))
    func aFillWithItsCatalogOnExt4XFSOrBtrfsEndsAsAFill() throws {
        for (type, mkfs) in Self.diskFileSystems {
            let dir = try TemporaryDirectory()
            try Self.withDiskFileSystem(type, mkfs, in: dir) { disk in try fillWithTheCatalogBeside(disk, options: ["640x480"]) }
        }
    }

    static let faultFS = repositoryFile("Tests/faultfs/faultfs.py")

    static var faultFSCanRun: Bool {
        getuid() == 0 && FileManager.default.fileExists(atPath: "/dev/fuse")
            && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/fusepy.py")
    }

    /// Runs `body` with Tests/faultfs (`options` say how it misbehaves) mounted at `dir/card`,
    /// passing through to `dir/backing`; unmounted after.
    static func withFaultFS(_ dir: TemporaryDirectory, _ options: [String] = [],
                            _ body: (_ card: String, _ backing: String) throws -> Void) throws {
        let backing = dir.file("backing"), card = dir.file("card")
        for path in [backing, card] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) }
        let daemon = try Daemon.spawn(["/usr/bin/python3", Self.faultFS] + options + [backing, card], output: dir.file("faultfs.log"))
        defer {
            _ = try? CamrollBinary.runProgram(["/bin/umount", card])
            _ = Daemon.wait(daemon)
        }
        var mounted = false
        for _ in 0..<100 where !mounted {
            mounted = ((try? String(contentsOfFile: "/proc/mounts", encoding: .utf8)) ?? "").contains(" \(card) fuse")
            if !mounted { usleep(50_000) }
        }
        try #require(mounted, "\((try? String(contentsOfFile: dir.file("faultfs.log"), encoding: .utf8)) ?? "")")
        try body(card, backing)
    }

    /// With --fsync, the last step of a save is the directory's fsync; when it fails (a dying
    /// card), the file is already under its final name. It is recorded, as not synced, counted
    /// in the summary, and the run ends with that error (74): summary, rows and files agree.
    /// Tests/faultfs makes every directory fsync fail.
    @Test(.enabled(if: faultFSCanRun, "needs root, /dev/fuse and python3-fusepy"))
    func aDirectoryThatCannotBeSyncedEndsTheRunWithTheFileCounted() throws {
        let dir = try TemporaryDirectory()
        try Self.withFaultFS(dir) { card, backing in try directoryThatCannotBeSynced(dir, card: card, backing: backing) }
    }

    func directoryThatCannotBeSynced(_ dir: TemporaryDirectory, card: String, backing: String) throws {
        let result = try CamrollBinary.run(
            ["-d", "pattern", "-r", "160x120", "-n", "3", "--fsync", "-o", card + "/{seq}.jpg", "--db", dir.file("c.sqlite3")])
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr.hasPrefix(
            "camroll: error: \(card)/1.jpg is in place, but its directory could not be synced: fsync '\(card)': Input/output error\n"),
            "\(result.stderr)")
        #expect(result.stdout.hasPrefix("failed after 1/3 files"), "\(result.stdout)")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved' AND synced = 0") == 1)
        #expect(try catalog.int("SELECT count(*) FROM saves") == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: backing) == ["1.jpg"])
        // Without --fsync no directory is synced, and the same card takes photos.
        let plain = try CamrollBinary.run(["-d", "pattern", "-r", "160x120", "-n", "3", "-o", card + "/b{seq}.jpg", "--db", dir.file("c.sqlite3")])
        #expect(plain.status == 0, "\(plain.stderr)")
    }

    /// A directory that cannot be listed while a killed run is repaired — a card failing as it
    /// is read — stops the repair with that error, the run left open for a repair once the card
    /// reads again. (readdir ends with NULL on an error as at the end; taking it for the end, the
    /// repair recorded none of the run's last files and closed the run: they stayed unrecorded.)
    @Test(.enabled(if: faultFSCanRun, "needs root, /dev/fuse and python3-fusepy"))
    func aDirectoryThatCannotBeListedStopsTheRepair() throws {
        let dir = try TemporaryDirectory()
        try Self.withFaultFS(dir, ["--listings-fail"]) { card, backing in
            let catalog = dir.file("c.sqlite3")
            let (process, _) = try CamrollBinary.startSaving(
                ["-d", "pattern", "-r", "64x48", "-n", "100000", "--json", "-o", card + "/out/{seq}.jpg", "--db", catalog])
            usleep(300_000)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let failing = backing + "/.listings-fail"
            #expect(FileManager.default.createFile(atPath: failing, contents: nil))
            let stopped = try CamrollBinary.run(["verify", "--repair", "--db", catalog])
            #expect(stopped.status == 74, "\(stopped.stdout)\(stopped.stderr)")
            #expect(stopped.stderr.hasPrefix("camroll: error: cannot read \(card)/out: Input/output error\n"), "\(stopped.stderr)")
            #expect(try CatalogReader(catalog).text("SELECT status FROM runs") == "running")

            try FileManager.default.removeItem(atPath: failing)
            let repaired = try CamrollBinary.run(["verify", "--repair", "--db", catalog])
            #expect(repaired.status == 0, "\(repaired.stdout)\(repaired.stderr)")
            let files = try FileManager.default.contentsOfDirectory(atPath: backing + "/out").filter { $0.hasSuffix(".jpg") }
            let reader = try CatalogReader(catalog)
            #expect(!files.isEmpty)
            #expect(try reader.int("SELECT count(*) FROM saves WHERE status = 'saved'") == files.count)
            #expect(try reader.text("SELECT status FROM runs") == "failed")
        }
    }

    /// A FUSE file system that says its space is unlimited (2^64-1 blocks, as servers for cloud
    /// storage say it): a fill there, bounded, saves and says so, the space left the most an Int
    /// holds. (Blocks times block size trapped in Swift before: "Not enough bits to represent
    /// the passed value", exit 132.)
    @Test(.enabled(if: faultFSCanRun, "needs root, /dev/fuse and python3-fusepy"))
    func aFileSystemThatSaysItsSpaceIsUnlimitedIsFilledWithoutACrash() throws {
        let dir = try TemporaryDirectory()
        try Self.withFaultFS(dir, ["--unlimited-space"]) { card, backing in
            let fill = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "--fill", "-n", "20", "-o", card + "/{seq}.jpg",
                                              "--db", dir.file("c.sqlite3"), "--json"])
            #expect(fill.status == 0, "\(fill.stderr)")
            #expect(fill.stdout.contains("\"free_bytes\":\(Int.max)"), "\(fill.stdout.suffix(400))")
            #expect(try FileManager.default.contentsOfDirectory(atPath: backing).filter { $0.hasSuffix(".jpg") }.count == 20)
            let verify = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
            #expect(verify.status == 0 && verify.stdout.contains("20 ok"), "\(verify.stdout)")
        }
        // The time to fill such a file system, at a slow enough rate, is more seconds than an Int
        // holds: the progress line says it cannot tell (Int(seconds) trapped).
        #expect(Units.clock(seconds: Double(Int.max) / 0.25) == "--:--")
        #expect(Units.clock(seconds: 3 * 3600 + 62) == "3:01:02")
    }

    /// A rename that finds no file to rename. FAT says so too of a file whose directory it can
    /// no longer read — a card failing or pulled out (seen in the VM: "the file being written
    /// (.001494.jpg…tmp) was removed by something else", for a card that was) — and then the
    /// directory cannot be synced either: the card failed, and the error says that, with the
    /// hint for a failing device. Where the directory syncs, the file was removed by another
    /// program, as it said. Either way nothing is recorded and no temporary file is counted.
    @Test(.enabled(if: faultFSCanRun, "needs root, /dev/fuse and python3-fusepy"),
          arguments: [["--renames-find-nothing"], ["--renames-find-nothing", "--directories-sync"]])
    func aRenameThatFindsNothingSaysWhetherTheCardFailed(_ options: [String]) throws {
        let dir = try TemporaryDirectory()
        try Self.withFaultFS(dir, options) { card, _ in
            let run = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-n", "3", "-o", card + "/{seq}.jpg", "--db", dir.file("c.sqlite3")])
            let failing = !options.contains("--directories-sync")
            let said = failing
                ? "camroll: error: cannot save \(card)/1.jpg: fsync of its directory \(card): Input/output error\n"
                    + "The device failed the write: removed, or failing?"
                : "camroll: error: cannot save \(card)/1.jpg: the file being written (."
            #expect(run.status == (failing ? 74 : 73) && run.stderr.hasPrefix(said), "\(run.status) \(run.stderr)")
            #expect(try CatalogReader(dir.file("c.sqlite3")).int("SELECT count(*) FROM saves") == 0)
        }
    }

    static var exfatThroughFUSE: Bool {
        getuid() == 0 && ["/usr/sbin/mkfs.exfat", "/usr/sbin/mount.exfat-fuse", "/usr/sbin/losetup"].allSatisfy {
            FileManager.default.isExecutableFile(atPath: $0)
        } && FileManager.default.fileExists(atPath: "/dev/fuse")
    }

    /// Runs `body` with an exFAT file system of `megabytes` (made with `mkfs` options) mounted
    /// through FUSE at `dir/card`; unmounted after.
    static func withExFATCard(_ dir: TemporaryDirectory, megabytes: Int, mkfs options: [String] = [],
                              _ body: (_ card: String) throws -> Void) throws {
        let image = dir.file("card.img"), card = dir.file("card")
        try FileManager.default.createDirectory(atPath: card, withIntermediateDirectories: false)
        try #require(FileManager.default.createFile(atPath: image, contents: nil) && truncate(image, off_t(megabytes) << 20) == 0)
        try #require(try CamrollBinary.runProgram(["/usr/sbin/mkfs.exfat"] + options + [image]).status == 0)
        let loop = try CamrollBinary.runProgram(["/usr/sbin/losetup", "-f", "--show", image])
        try #require(loop.status == 0, "\(loop.stderr)")
        let device = loop.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        defer { _ = try? CamrollBinary.runProgram(["/usr/sbin/losetup", "-d", device]) }
        let mounted = try Daemon.run(["/usr/sbin/mount.exfat-fuse", device, card], output: dir.file("mount.log"))
        try #require(mounted.status == 0, "\(mounted.output)")
        defer { _ = try? CamrollBinary.runProgram(["/bin/umount", card]) }
        try body(card)
    }

    /// After a power cut FAT can show a synced photo under its short name only — 0653.JPG, its
    /// long name 0653.jpg lost — the same file to FAT by either name. Repair records such a file
    /// of the run's that has no row, under the name it has now, and none twice. (It passed over
    /// it: neither recorded nor said to be left alone; the VM's power cut met one on FAT32.)
    /// Played on an exFAT card, which finds a name in any case as FAT does, and on a tmpfs,
    /// which does not: there 4.JPG is another name than the run's 4.jpg.
    @Test(.enabled(if: exfatThroughFUSE, "needs root, exfatprogs, exfat-fuse, a loop device and /dev/fuse"))
    func aRunsFileShownInCapitalsIsRecordedWhereNamesIgnoreCase() throws {
        func cutShortWithNamesInCapitals(_ card: String, catalog: String) throws -> CamrollBinary.Result {
            let run = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-n", "5", "-o", card + "/p/{seq}.jpg", "--db", catalog])
            try #require(run.status == 0, "\(run.stderr)")
            // Killed before the rows of 4 and 5 were committed; 2 (recorded) and 4 (not) in capitals.
            try Database(path: catalog).execute("UPDATE runs SET status = 'running', pid = 999999; DELETE FROM saves WHERE seq >= 4")
            for seq in [2, 4] { try #require(rename(card + "/p/\(seq).jpg", card + "/p/\(seq).JPG") == 0) }
            return try CamrollBinary.run(["verify", "--repair", "--db", catalog])
        }
        let dir = try TemporaryDirectory()
        try Self.withExFATCard(dir, megabytes: 24) { card in
            let repair = try cutShortWithNamesInCapitals(card, catalog: dir.file("c.sqlite3"))
            #expect(repair.status == 0 && repair.stdout.contains(", 2 unrecorded file(s) recorded, ") && !repair.stdout.contains("left alone"),
                    "\(repair.stdout)\(repair.stderr)")
            let paths = try CatalogReader(dir.file("c.sqlite3")).rows("SELECT path FROM saves ORDER BY seq", columns: 1).compactMap { $0[0] }
            #expect(paths.map { PathText.lastComponent(of: $0) } == ["1.jpg", "2.jpg", "3.jpg", "4.JPG", "5.jpg"], "\(paths)")
            let verify = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
            #expect(verify.status == 0 && verify.stdout.contains("verified 5 files: 5 ok"), "\(verify.stdout)")
        }
        let small = try SmallFileSystem(dir, size: "20m")
        // 5.jpg recorded, 4.JPG not (not the run's name); 2.jpg, which is 2.JPG now, missing.
        let repair = try cutShortWithNamesInCapitals(small.path, catalog: dir.file("t.sqlite3"))
        #expect(repair.status == 1 && repair.stdout.contains(", 1 unrecorded file(s) recorded, ") && repair.stdout.contains(" 1 missing"),
                "\(repair.stdout)\(repair.stderr)")
    }

    /// An exFAT card through FUSE (exfat-fuse), a real file system that has neither
    /// RENAME_NOREPLACE nor hard links: every save once failed there with "rename: Operation
    /// not permitted". Now names are looked up and then renamed over, and what camroll promises
    /// holds: an existing file is refused and kept, parallel writers, the default numbering, a
    /// fill to the last block, no temporary file left, verify all ok.
    @Test(.enabled(if: exfatThroughFUSE, "needs root, exfatprogs, exfat-fuse, a loop device and /dev/fuse"))
    func anExFATCardThroughFUSEKeepsEveryPromise() throws {
        let dir = try TemporaryDirectory()
        try Self.withExFATCard(dir, megabytes: 24) { card in try exFATCardKeepsEveryPromise(dir, card: card) }
    }

    /// A fill in a directory of every 3 photos on exFAT with 32 KB clusters, where a photo and a
    /// directory take a cluster each: it ends when a new directory (below the card's root, where
    /// exfat-fuse finds one a cluster) finds none left — the card is full, the fill done (it was
    /// "cannot create directory", exit 73).
    @Test(.enabled(if: exfatThroughFUSE, "needs root, exfatprogs, exfat-fuse, a loop device and /dev/fuse"))
    func aFillThatEndsAtANewDirectoryHasFilledTheCard() throws {
        let dir = try TemporaryDirectory()
        try Self.withExFATCard(dir, megabytes: 20, mkfs: ["-c", "32K"]) { card in
            let db = ["--db", dir.file("c.sqlite3")]
            // -n bounds the fill (~430 photos fill the card) should the card not be mounted after all.
            let fill = try CamrollBinary.run(["-d", "pattern", "--fill", "-n", "2000", "-o", card + "/fill/{seq/3}/{seq}.jpg"] + db)
            #expect(fill.status == 0 && fill.stdout.hasPrefix("filled "), "\(fill.stdout)\(fill.stderr)")
            let saved = try CatalogReader(dir.file("c.sqlite3")).int("SELECT count(*) FROM saves WHERE status = 'saved'")
            let files = try FileManager.default.subpathsOfDirectory(atPath: card)
            #expect(files.filter { $0.hasSuffix(".jpg") }.count == saved && saved > 300, "rows \(saved)")
            #expect(saved % 3 == 0, "the fill ended inside a directory, not at a new one: this no longer tests that")
            #expect(!files.contains { $0.hasSuffix(".tmp") })
            var info = statvfs()
            #expect(statvfs(card, &info) == 0 && info.f_bavail == 0)
            let verify = try CamrollBinary.run(["verify"] + db)
            #expect(verify.status == 0 && verify.stdout.contains("verified \(saved) files: \(saved) ok"), "\(verify.stdout)")
        }
    }

    private func exFATCardKeepsEveryPromise(_ dir: TemporaryDirectory, card: String) throws {
        let db = ["--db", dir.file("c.sqlite3")]

        // The trace says which way the saves went into place: neither the flag nor hard links here.
        let first = try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "-n", "5", "-o", card + "/{seq}.jpg"] + db,
                                          environment: ["CAMROLL_TRACE": "1"])
        #expect(first.status == 0 && first.stderr.contains("trace: no RENAME_NOREPLACE: link")
                && first.stderr.contains("trace: no hard links: look up"), "\(first.stderr)")
        let again = try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "-q", "50", "-n", "5", "-o", card + "/{seq}.jpg"] + db)
        #expect(again.status == 73 && again.stderr.hasPrefix("camroll: error: \(card)/1.jpg already exists"), "\(again.stderr)")
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "-n", "8", "--jobs", "4", "-o", card + "/j{seq}.jpg"] + db).status == 0)
        // A name FAT and exFAT do not allow: said so, not "No such file or directory".
        let colon = try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "-o", card + "/a:b.jpg"] + db)
        #expect(colon.status == 73 && colon.stderr.hasPrefix("camroll: error: cannot save \(card)/a:b.jpg: the file system refuses ':' in a name\n"),
                "\(colon.stderr)")
        // exFAT ignores case: another spelling of a saved name is that name, refused; replaced
        // with --overwrite, verify says so and is content (exit 0), not "overwritten" (exit 1).
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "-o", card + "/Case.jpg"] + db).status == 0)
        let lower = try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "-o", card + "/case.jpg"] + db)
        #expect(lower.status == 73 && lower.stderr.contains("already exists"), "\(lower.stderr)")
        #expect(try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "-q", "50", "--overwrite", "-o", card + "/case.jpg"] + db).status == 0)
        let replaced = try CamrollBinary.run(["verify"] + db)
        #expect(replaced.status == 0 && replaced.stdout.contains("0 aliased, 1 replaced"), "\(replaced.stdout)")
        #expect(replaced.stdout.hasPrefix("replaced: \(card)/Case.jpg: replaced by \(card)/case.jpg"), "\(replaced.stdout)")
        #expect(try CamrollBinary.run(["verify", "--repair"] + db).status == 0)
        #expect(try CatalogReader(dir.file("c.sqlite3")).text("SELECT status FROM saves WHERE path LIKE '%/Case.jpg'") == "replaced")
        // The default naming numbers a second photo taken in the same second.
        let environment = ["HOME": dir.path, "XDG_PICTURES_DIR": card]
        for _ in 0..<2 {
            #expect(try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "-n", "2"] + db, environment: environment).status == 0)
        }
        #expect(dir.files(in: "card/camroll", suffix: ".jpg").count == 4)
        // -n bounds the fill (~3000 files fill the card) should the card not be mounted after all.
        let fill = try CamrollBinary.run(["-d", "pattern", "-r", "320x240", "--fill", "-n", "20000", "-o", card + "/fill/{seq}.jpg"] + db)
        #expect(fill.status == 0, "\(fill.stderr)")
        let verify = try CamrollBinary.run(["verify"] + db)
        #expect(verify.status == 0 && verify.stdout.contains(" 0 corrupt, 0 missing, 0 aliased"), "\(verify.stdout)")
        let saved = try CatalogReader(dir.file("c.sqlite3")).int("SELECT count(*) FROM saves WHERE status = 'saved'")
        let files = dir.files(in: "card", suffix: ".jpg").count + dir.files(in: "card/camroll", suffix: ".jpg").count
            + dir.files(in: "card/fill", suffix: ".jpg").count
        #expect(saved == files && saved > 1000, "rows \(saved), files \(files)")
        let left = try FileManager.default.subpathsOfDirectory(atPath: card).filter { $0.hasSuffix(".tmp") }
        #expect(left.isEmpty, "\(left)")
    }
}

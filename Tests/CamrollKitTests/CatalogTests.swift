@testable import CamrollKit
import CSQLite
import Foundation
import Testing

@Suite struct CatalogTests {
    @Test func newCatalogHasTheSchemaWALAndVersion() throws {
        let dir = try TemporaryDirectory()
        let catalog = try Catalog(path: dir.file("nested/dir/c.sqlite3"))
        #expect(try catalog.database.scalarInt("PRAGMA user_version") == Catalog.schemaVersion)
        #expect(try catalog.database.scalarText("PRAGMA journal_mode") == "wal")
        #expect(try catalog.database.scalarInt("PRAGMA foreign_keys") == 1)
        for (table, columns) in [
            ("runs", ["id", "uuid", "started_at", "finished_at", "command", "device", "requested_count", "status", "error"]),
            ("captures", ["id", "run_id", "uuid", "captured_at", "frame_sequence", "pixel_format", "width", "height",
                          "jpeg_quality", "jpeg_bytes", "xxh128"]),
            ("thumbnails", ["capture_id", "jpeg"]),
            ("saves", ["id", "capture_id", "seq", "path", "bytes", "xxh128", "saved_at", "duration_us", "synced", "status"]),
        ] {
            let statement = try catalog.database.prepare("SELECT name FROM pragma_table_info('\(table)')")
            var names: [String] = []
            while try statement.step() { names.append(statement.text(0) ?? "") }
            for column in columns { #expect(names.contains(column), "\(table).\(column)") }
        }
    }

    /// A catalog of schema 7 (thumbnails in the captures' rows) opened by this camroll: each
    /// thumbnail moved to the thumbnails table, byte for byte, the column gone, nothing else
    /// changed — also with a view of the user's that names the column.
    @Test func thumbnailsMoveToTheirOwnTable() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("c.sqlite3")
        let old = try Database(path: path)
        for step in Migrations.steps[0..<7] { try old.execute(step) }
        try old.execute("""
            PRAGMA user_version=7;
            INSERT INTO runs(id, uuid, started_at, command, device, requested_count, status)
                VALUES (1, 'r', '2026-12-07T10:00:00.000Z', 'camroll snap', 'pattern', 2, 'completed');
            INSERT INTO captures(id, run_id, uuid, captured_at, pixel_format, width, height, jpeg_bytes, xxh128, thumbnail)
                VALUES (1, 1, 'a', '2026-12-07T10:00:00.000Z', 'RGB3', 64, 48, 10, 'h1', x'ffd8ffd9'),
                       (2, 1, 'b', '2026-12-07T10:00:01.000Z', 'RGB3', 64, 48, 10, 'h2', NULL);
            -- A view of the user's own that names the column: the step goes through all the same.
            CREATE VIEW my_thumbnails AS SELECT id, thumbnail FROM captures;
            """)
        let catalog = try Catalog(path: path)
        #expect(try catalog.database.scalarInt("PRAGMA user_version") == Catalog.schemaVersion)
        #expect(try catalog.database.scalarText("SELECT group_concat(capture_id || ':' || hex(jpeg)) FROM thumbnails") == "1:FFD8FFD9")
        #expect(try catalog.database.scalarInt("SELECT count(*) FROM pragma_table_info('captures') WHERE name = 'thumbnail'") == 0)
        #expect(try catalog.database.scalarInt("SELECT count(*) FROM captures") == 2)
    }

    @Test func reopeningDoesNotMigrateAgain() throws {
        let dir = try TemporaryDirectory()
        _ = try Catalog(path: dir.file("c.sqlite3"))
        let again = try Catalog(path: dir.file("c.sqlite3"))
        #expect(try again.database.scalarInt("PRAGMA user_version") == Catalog.schemaVersion)
    }

    /// Three cameras, one new catalog, started together: each creates or joins it, none fails.
    @Test(arguments: 1...5)
    func processesCreatingOneCatalogAtOnceTakeTurns(attempt: Int) throws {
        let dir = try TemporaryDirectory()
        let processes = (1...3).map { index in
            CamrollBinary.process(["-d", "pattern", "-r", "64x48", "-n", "10", "--quiet", "-o", dir.file("p\(index)/{seq}.jpg"),
                                   "--db", dir.file("c.sqlite3")])
        }
        for process in processes { try process.run() }
        for process in processes { process.waitUntilExit() }
        #expect(processes.map(\.terminationStatus) == [0, 0, 0])
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM runs WHERE status = 'completed'") == 3)
        #expect(try catalog.int("SELECT count(*) FROM saves") == 30)
        #expect(try catalog.int("PRAGMA user_version") == Catalog.schemaVersion)
    }

    @Test func aNewerSchemaIsRefused() throws {
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.file("c.sqlite3"))
        try database.execute("PRAGMA user_version=99")
        #expect { try Catalog(path: dir.file("c.sqlite3")) } throws: { ($0 as? CamrollError)?.exitCode == .dataError }
    }

    /// A write refused for space is the same to the user whatever SQLite calls it: "database or
    /// disk is full", or an I/O error of a system call that found no room (its log or WAL index
    /// grown, its file synced). Both end a fill and free the room kept for the catalog; the I/O
    /// error was "catalog …: I/O error: disk I/O error (No space left on device)", which did not.
    @Test func aCatalogWriteRefusedForSpaceSaysSoWhateverSQLiteCallsIt() {
        for (code, errno, said) in [(SQLITE_FULL, Int32(0), "no space left on device"),
                                    (SQLITE_IOERR | (3 << 8), ENOSPC, "no space left on device"),  // SQLITE_IOERR_WRITE
                                    (SQLITE_IOERR | (19 << 8), EDQUOT, "disk quota exceeded")] {  // SQLITE_IOERR_SHMSIZE
            let error = Catalog.userError(DatabaseError(code: code, message: "disk I/O error", sql: nil, systemErrno: errno), path: "/card/c.sqlite3")
            #expect(error.message == "catalog /card/c.sqlite3: \(said)" && error.isNoSpace && error.exitCode == .ioError, "\(error.message)")
            #expect(error.hint?.hasPrefix("Make room on the file system that holds it (") == true)
        }
        let failing = Catalog.userError(DatabaseError(code: SQLITE_IOERR, message: "disk I/O error", sql: nil, systemErrno: EIO), path: "/c")
        #expect(failing.message == "catalog /c: I/O error: disk I/O error (Input/output error)" && !failing.isNoSpace)
    }

    @Test func statusIsConstrained() throws {
        let dir = try TemporaryDirectory()
        let catalog = try Catalog(path: dir.file("c.sqlite3"))
        #expect(throws: DatabaseError.self) {
            try catalog.database.execute(
                "INSERT INTO runs(uuid, started_at, command, device, requested_count, status) VALUES ('u','t','c','d',1,'bogus')")
        }
    }

    /// Save rows are written with the status check switched off (`recordSaves`): the rows are
    /// right — each earlier row of a path saved again, in the same batch or an earlier one,
    /// `replaced`, a deleted one left so — and the check holds again for the next statement.
    @Test func savesRecordedInABatchLeaveTheStatusCheckOn() throws {
        let dir = try TemporaryDirectory()
        let (catalog, captureID) = try catalogWithOneCapture(in: dir)
        let save = { (seq: Int, path: String) in
            Catalog.NewSave(captureID: captureID, seq: seq, path: path, bytes: 10, xxh128: "h", savedAt: Date(),
                            durationMicroseconds: 1, synced: false)
        }
        try catalog.recordSaves([save(1, "/p/a.jpg"), save(2, "/p/b.jpg"), save(3, "/p/a.jpg"), save(4, "/p/d.jpg")])
        try catalog.database.execute("UPDATE saves SET status = 'deleted' WHERE seq = 4")
        // A second batch replaces rows of the first (b) but not a deleted one (d).
        try catalog.recordSaves([save(5, "/p/b.jpg"), save(6, "/p/c.jpg"), save(7, "/p/d.jpg")])
        // Batches of one row (a single photo's) take another statement: the same marks.
        try catalog.recordSaves([save(8, "/p/c.jpg")])
        try catalog.recordSaves([save(9, "/p/d.jpg")])
        try catalog.recordSaves([save(10, "/p/e.jpg")])
        let statuses = try catalog.database.prepare("SELECT status FROM saves ORDER BY seq")
        var seen: [String] = []
        while try statuses.step() { seen.append(statuses.text(0) ?? "") }
        #expect(seen == ["replaced", "replaced", "saved", "deleted", "saved", "replaced", "replaced", "saved", "saved", "saved"])
        #expect(try catalog.database.scalarInt("PRAGMA ignore_check_constraints") == 0)
        #expect(throws: DatabaseError.self) { try catalog.database.execute("UPDATE saves SET status = 'bogus'") }
    }

    /// Batches of every size up to past two of the largest insert statement (64 rows) and its
    /// remainders: every row in the catalog once, with its own values, in order; the texts
    /// (bound in place, not copied) each row's own, an empty one empty; a path saved twice in
    /// one batch, on either side of a statement's boundary, replaced.
    @Test func batchesOfAnySizeRecordEveryRowWithItsValues() throws {
        let dir = try TemporaryDirectory()
        let (catalog, captureID) = try catalogWithOneCapture(in: dir)
        var seq = 0
        var expected: [String] = []
        for size in [1, 2, 3, 4, 5, 15, 16, 17, 63, 64, 65, 85, 150] {
            var batch: [Catalog.NewSave] = []
            for index in 0..<size {
                seq += 1
                let row = Catalog.NewSave(
                    captureID: captureID, seq: seq, path: "/p/\(seq)-é.jpg", bytes: seq * 3, xxh128: index == 2 ? "" : "h\(seq)",
                    savedAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(seq)), durationMicroseconds: seq * 7,
                    synced: seq % 2 == 0, job: seq % 3 == 0 ? nil : seq % 3)
                batch.append(row)
                expected.append("\(seq)|/p/\(seq)-é.jpg|\(seq * 3)|\(index == 2 ? "" : "h\(seq)")|"
                    + "\(Timestamp.iso8601(row.savedAt))|\(seq * 7)|\(seq % 2 == 0 ? 1 : 0)|\(seq % 3 == 0 ? "-" : "\(seq % 3)")|saved")
            }
            try catalog.recordSaves(batch)
        }
        // 64 rows, the 64th's path again as the 65th: the first statement's last row replaced
        // by the next statement's first.
        let again = (1...65).map { index in
            Catalog.NewSave(captureID: captureID, seq: seq + index, path: index == 65 ? "/p/again-64" : "/p/again-\(index)",
                            bytes: 1, xxh128: "x", savedAt: Date(), durationMicroseconds: 1, synced: false)
        }
        try catalog.recordSaves(again)
        let rows = try catalog.database.prepare(
            "SELECT seq, path, bytes, xxh128, saved_at, duration_us, synced, coalesce(job, '-'), status FROM saves ORDER BY id")
        var seen: [String] = []
        while try rows.step() {
            seen.append((0..<9).map { rows.text(Int32($0)) ?? "NULL" }.joined(separator: "|"))
        }
        #expect(seen.count == expected.count + 65)
        #expect(Array(seen.prefix(expected.count)) == expected)
        #expect(try catalog.database.scalarText("SELECT status FROM saves WHERE seq = \(seq + 64)") == "replaced")
        #expect(try catalog.database.scalarText("SELECT status FROM saves WHERE seq = \(seq + 65)") == "saved")
        #expect(try catalog.database.scalarInt("SELECT count(*) FROM saves WHERE status = 'replaced'") == 1)
    }

    /// A catalog in `dir` with a run and its one capture, for save rows.
    private func catalogWithOneCapture(in dir: TemporaryDirectory) throws -> (Catalog, captureID: Int) {
        let catalog = try Catalog(path: dir.file("c.sqlite3"))
        let runID = try catalog.beginRun(.init(
            uuid: "r", startedAt: Date(), command: "snap", device: "pattern", requestedCount: 3, requestedFrames: 1,
            outputTemplate: "/p/{seq}.jpg"))
        let captureID = try catalog.addCapture(.init(
            runID: runID, uuid: "c", capturedAt: Date(), pixelFormat: "YUYV", width: 2, height: 2, jpegBytes: 10,
            xxh128: "h"))
        return (catalog, captureID)
    }

    @Test func timestampsAreISO8601UTCWithMilliseconds() {
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: 1_764_693_005.1239)) == "2025-12-02T16:30:05.123Z")
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
    }

    /// The hand-made calendar against glibc's gmtime_r and strftime, over the whole range the
    /// format can write (leap years, centuries, 1 BC's neighbours, the last day of 9999) and
    /// around the epoch, and back through the parser.
    @Test func timestampsAgreeWithGmtimeOverTheirRange() {
        var generator = SystemRandomNumberGenerator()
        let edges: [Int] = [0, -1, 86_399, 86_400, -86_400, -86_401, 951_782_400, 951_868_799,
                            4_107_542_400, -2_203_891_200, Int(Timestamp.earliest), Int(Timestamp.latest)]
        let whole = edges + (0..<20_000).map { _ in
            Int.random(in: Int(Timestamp.earliest)...Int(Timestamp.latest), using: &generator)
        }
        for second in whole {
            var time = time_t(second)
            var parts = tm()
            gmtime_r(&time, &parts)
            var buffer = [CChar](repeating: 0, count: 32)
            strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S", &parts)
            let expected = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }.leftPadded(toYearDigits: 4) + ".000Z"
            let written = Timestamp.iso8601(Date(timeIntervalSince1970: Double(second)))
            #expect(written == expected, "\(second)")
            #expect(Timestamp.seconds(ofISO8601: written) == Double(second), "\(written)")
            if written != expected { break }
        }
    }
}

private extension String {
    /// strftime's %Y writes years before 1000 without leading zeros.
    func leftPadded(toYearDigits digits: Int) -> String {
        let year = prefix { $0 != "-" }
        return String(repeating: "0", count: max(0, digits - year.count)) + self
    }
}

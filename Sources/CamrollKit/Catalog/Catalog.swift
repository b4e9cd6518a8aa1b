import CSQLite
import FoundationEssentials
import Glibc

/// The SQLite catalog: a row per run, per captured frame, per saved file.
public final class Catalog {
    public let database: Database
    public let path: String
    public let readOnly: Bool
    private var insertSaves: [Int: Statement] = [:]
    private var markReplaced: Statement?
    private var markPathReplaced: Statement?
    private var insertCapture: Statement?
    private var insertThumbnail: Statement?
    private var updateRunEnd: Statement?
    /// Opened with the first run this connection begins.
    private var runLock: RunLock?

    public enum RunStatus: String, Sendable {
        case running, completed, cancelled, failed
    }

    /// `$XDG_DATA_HOME/camroll/catalog.sqlite3`, falling back to `~/.local/share`.
    public static func defaultPath(environment: [String: String]) throws -> String {
        let base = try environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? UserDirectories.home(environment: environment) + "/.local/share"
        return base + "/camroll/catalog.sqlite3"
    }

    /// Opens or creates the catalog, brings its schema up to date, turns on WAL. With
    /// `readOnly`, opens an existing catalog for reading only, without changing anything, so
    /// that one on read-only media or owned by someone else can still be listed and verified.
    /// Without `mayCreate`, a database with no camroll tables is refused, not made a catalog:
    /// `verify --repair` of a catalog a power cut left empty must not pass as a new one.
    /// `exclusive`: held by this process alone until it closes, with SQLite's WAL index in the
    /// process's memory instead of the `-shm` file SQLite otherwise maps — for a fill of the
    /// catalog's own copy-on-write file system (btrfs), which leaves no room for a write into
    /// that mapping: the kernel then sends SIGBUS. (Elsewhere a write over the pages the file
    /// has takes no room, and the catalog stays open to other processes during the fill.)
    public init(path: String, readOnly: Bool = false, mayCreate: Bool = true, exclusive: Bool = false,
                busyTimeoutMilliseconds: Int32 = 5000) throws {
        self.path = try AbsolutePath.resolve(path, code: readOnly ? .noInput : .cannotCreate)
        self.readOnly = readOnly
        do {
            if readOnly {
                try Self.refuseNonFile(self.path, as: .noInput)
                database = try Self.openForReading(self.path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
                let found = try identify()
                try refuseForeign(found)
                try checkVersion(found.version)
                return
            }
            try Self.refuseNonFile(self.path)
            try Self.createParentDirectory(of: self.path)
            database = try Self.openForWriting(self.path, exclusive: exclusive, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
            // Before anything is changed (WAL, tables): a database of another program stays as it is.
            let found = try identify()
            try refuseForeign(found)
            if !mayCreate { try checkVersion(found.version) }
            try database.execute("PRAGMA foreign_keys=ON")
            try enableWAL(busyTimeoutMilliseconds: Int(busyTimeoutMilliseconds))
            try database.execute("PRAGMA synchronous=NORMAL")
            try migrate()
        } catch let error as DatabaseError {
            throw Self.userError(error, path: self.path)
        }
    }

    /// Opened and read once: SQLite makes the WAL index (`-shm`) at the first read of a catalog
    /// in WAL mode, and on a full file system — a card that a fill, or anything else, filled —
    /// there is no room to make it. Held by this process alone, a connection keeps that index in
    /// its memory instead; so a catalog is opened that way where the index cannot be made, and
    /// can still be verified, listed and repaired.
    private static func openForWriting(_ path: String, exclusive: Bool, busyTimeoutMilliseconds: Int32) throws -> Database {
        func open(exclusive: Bool) throws -> Database {
            let database = try Database(path: path)
            database.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
            // Before the first read: only then does SQLite keep the WAL index in memory.
            if exclusive { try database.execute("PRAGMA locking_mode=EXCLUSIVE") }
            _ = try database.scalarInt("PRAGMA schema_version")
            return database
        }
        do {
            return try open(exclusive: exclusive)
        } catch let error as DatabaseError where !exclusive && error.isNoSpace {
            return try open(exclusive: true)
        }
    }

    /// `mode=ro` first; where that cannot work because the WAL index (`-shm`) can be neither
    /// found nor created (read-only media), `immutable=1`, which reads the main file as it is.
    /// A catalog is checkpointed whenever a writer finishes with it, so the main file is whole.
    /// Where the index cannot be made for want of room, the catalog is read through a
    /// connection that holds it alone (`openForWriting`): such a connection must be able to
    /// write, though nothing is written through it but what SQLite itself does when it closes
    /// (the WAL copied into the main file, where there is room).
    private static func openForReading(_ path: String, busyTimeoutMilliseconds: Int32) throws -> Database {
        let uri = "file:" + percentEncoded(path)
        // Each connection is read once and closed if that fails, before the next is opened: an
        // open one would hold its lock against the next.
        func open(_ uri: String) throws -> Database {
            let database = try Database(uri: uri)
            database.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
            _ = try database.scalarInt("PRAGMA schema_version")
            return database
        }
        do {
            return try open(uri + "?mode=ro")
        } catch let error as DatabaseError where error.primaryCode == SQLITE_CANTOPEN || error.primaryCode == SQLITE_READONLY {
            return try open(uri + "?mode=ro&immutable=1")
        } catch let error as DatabaseError where error.isNoSpace && access(path, W_OK) == 0 {
            return try openForWriting(path, exclusive: true, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        }
    }

    private static func percentEncoded(_ path: String) -> String {
        var out = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"), 0..<0x21, 0x7F...:
                out += "%" + Format.hexByte(byte)
            default:
                out.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return out
    }

    /// A catalog path that names something other than a file: SQLite's own word for a
    /// directory or a device is "disk I/O error", and on a FIFO it waits for a writer for ever.
    /// `code`: 73 where the catalog would be created, 66 where it must exist (the catalog commands).
    static func refuseNonFile(_ path: String, as code: ExitCode = .cannotCreate) throws {
        var status = stat()
        guard stat(path, &status) == 0 else { return }  // not there (yet): SQLite says what it finds
        switch status.st_mode & S_IFMT {
        case S_IFREG:
            return
        case S_IFDIR:
            throw CamrollError(
                code, "catalog \(path) is a directory",
                hint: "Name a file with --db, e.g. --db \(path)/catalog.sqlite3.")
        default:
            let kind = (status.st_mode & S_IFMT) == S_IFIFO ? "a FIFO" : (status.st_mode & S_IFMT) == S_IFSOCK ? "a socket" : "a device"
            throw CamrollError(code, "catalog \(path) is \(kind), not a file", hint: "Name a file with --db PATH.")
        }
    }

    /// The schema version and the tables of the database. Where two camrolls create a catalog
    /// at once, the other's first migration makes its tables and sets the version in one
    /// commit, and the version never goes down: so the tables are read first, and the version
    /// read after them is at least the one they were made with (read the other way round, the
    /// tables of a migration committed in between would look like another program's).
    /// Two plain statements, not one of pragma_user_version, UNION and LIKE: that one made
    /// every process that opens a catalog run ~800 more blocks of SQLite's code, which a
    /// one-photo process pays for under qemu (make bench-startup).
    private func identify() throws -> (version: Int, tables: Set<String>) {
        let statement = try database.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        var tables: Set<String> = []
        while try statement.step() {
            if let name = statement.text(0), !name.hasPrefix("sqlite_") { tables.insert(name) }
        }
        let version = try database.scalarInt("PRAGMA user_version") ?? 0
        return (version, tables)
    }

    /// A database of another program named by mistake with --db (a browser's history, an
    /// app's settings): camroll adds no tables to it and does not switch it to WAL. An empty
    /// database becomes a catalog; one with tables is another program's when it has no schema
    /// version (camroll sets one with its first tables) or none of camroll's tables. (One with
    /// some of them is a damaged catalog: the commands say which table is missing.)
    private func refuseForeign(_ found: (version: Int, tables: Set<String>)) throws {
        guard !found.tables.isEmpty, found.version == 0 || found.tables.isDisjoint(with: ["runs", "captures", "saves"]) else { return }
        let some = found.tables.sorted().prefix(3).joined(separator: ", ") + (found.tables.count > 3 ? ", …" : "")
        throw CamrollError(.dataError, "\(path) is the database of something else, not a camroll catalog (its tables: \(some))",
                           hint: "Choose another catalog with --db PATH.")
    }

    private func checkVersion(_ current: Int) throws {
        guard current <= Self.schemaVersion else {
            throw CamrollError(
                .dataError,
                "catalog \(path) has schema version \(current); this camroll knows up to \(Self.schemaVersion)",
                hint: "Use a newer camroll, or choose another catalog with --db.")
        }
        guard current > 0 else {
            // An empty file: a camroll that could not write it (a full disk) left it so.
            var status = stat()
            let empty = stat(path, &status) == 0 && status.st_size == 0
            throw CamrollError(.dataError, "\(path) is not a camroll catalog (\(empty ? "it is empty: 0 bytes" : "it has no camroll tables"))",
                               hint: "Choose another catalog with --db PATH.")
        }
    }

    /// The catalog's files that are there now, each with what it is, for the saving never to
    /// replace them: the database, SQLite's WAL and its index, camroll's run locks.
    static func ownFiles(_ path: String) -> [FileIdentity: String] {
        var files: [FileIdentity: String] = [:]
        for (suffix, what) in [("", "the catalog"), ("-wal", "the catalog's write-ahead log"),
                               ("-shm", "the catalog's WAL index"), ("-journal", "the catalog's journal"),
                               (".runs-lock", "the catalog's lock file")] {
            if let file = FileIdentity(path: path + suffix) { files[file] = "\(what) \(path + suffix)" }
        }
        return files
    }

    /// Copies what the WAL holds into the main file and empties the WAL, so that the catalog
    /// file alone is complete (copied, backed up, or read from read-only media). Best effort: a
    /// reader in another process may hold the WAL, and then its next writer does this.
    public func checkpoint() {
        guard !readOnly else { return }
        _ = try? database.scalarInt("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// Throws when the catalog file was deleted or replaced while open: rows would then go to
    /// a file that nobody can open any more.
    func checkStillInPlace() throws {
        var moved: Int32 = 0
        let status = sqlite3_file_control(database.handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved)
        if status == SQLITE_OK && moved != 0 {
            throw CamrollError(.ioError, "catalog \(path) was deleted or moved while camroll was writing to it")
        }
    }

    public static let schemaVersion = Migrations.steps.count

    /// `saves.bytes` and `saves.duration_us` (table alias `s`) as the reading commands use them:
    /// within what a real save can be, so that a catalog edited by hand or damaged cannot make
    /// their sums overflow (a trap in Swift, an error from SQLite's sum()): 0 to 2^40 bytes
    /// (1 TiB; no JPEG reaches 13 GB) and 0 to 2^40 µs (12.7 days).
    static let plausibleBytes = "min(max(s.bytes, 0), 1099511627776)"
    static let plausibleDuration = "min(max(s.duration_us, 0), 1099511627776)"

    /// Switching a new database to WAL takes an exclusive lock, which SQLite's busy handler does
    /// not wait for: two camrolls creating one catalog at once must take turns here.
    private func enableWAL(busyTimeoutMilliseconds: Int) throws {
        let deadline = monotonicMicroseconds() + busyTimeoutMilliseconds * 1000
        while true {
            do {
                let mode = try database.scalarText("PRAGMA journal_mode=WAL")
                if mode?.lowercased() != "wal" {
                    // Some file systems (network mounts) cannot do WAL; the catalog still works.
                    try database.execute("PRAGMA journal_mode=DELETE")
                }
                return
            } catch let error as DatabaseError where error.primaryCode == SQLITE_BUSY && monotonicMicroseconds() < deadline {
                usleep(10_000)
            }
        }
    }

    /// Brings the schema up to date one step at a time. Each step reads the version inside its
    /// own write transaction, so two processes opening a new catalog at once do not both migrate.
    private func migrate() throws {
        // Up to date, as a catalog almost always is: no write transaction (taking the write lock
        // and committing nothing is work a one-photo run does not need).
        let seen = try database.scalarInt("PRAGMA user_version") ?? 0
        if seen > Self.schemaVersion { try checkVersion(seen) }
        if seen == Self.schemaVersion { return }
        while true {
            let done: Bool = try database.transaction {
                let current = try database.scalarInt("PRAGMA user_version") ?? 0
                if current > Self.schemaVersion { try checkVersion(current) }
                guard current < Self.schemaVersion else { return true }
                do {
                    try database.execute(Migrations.steps[current])
                } catch let error as DatabaseError where error.primaryCode == SQLITE_ERROR {
                    // The catalog's own tables are there: something else in it stops the step.
                    throw CamrollError(
                        .dataError, "cannot bring catalog \(path) up to schema \(current + 1): \(error.message)",
                        hint: "Nothing was changed. Look at what the message names in the catalog (sqlite3 \(path) .schema).")
                }
                try database.execute("PRAGMA user_version=\(current + 1)")
                return false
            }
            if done { return }
        }
    }

    private static func createParentDirectory(of path: String) throws {
        let directory = PathText.directory(of: path)
        do {
            try Directories.create(directory)
        } catch let error as SystemError {
            throw CamrollError(
                .cannotCreate, "cannot create the catalog's directory \(directory): \(error.reason)",
                hint: "Choose another catalog with --db PATH.")
        }
    }

    /// Turns an SQLite failure into a one-line error with the right exit code.
    public static func userError(_ error: DatabaseError, path: String) -> CamrollError {
        switch error.primaryCode {
        case SQLITE_NOTADB:
            return CamrollError(
                .dataError, "\(path) is not an SQLite catalog",
                hint: "Choose another catalog with --db PATH.")
        case SQLITE_CORRUPT:
            return CamrollError(.dataError, "catalog \(path) is corrupt: \(error.message)")
        case SQLITE_BUSY, SQLITE_LOCKED:
            return CamrollError(
                .unavailable, "catalog \(path) is locked by another process",
                hint: "Wait for the other camroll to finish, or use another catalog with --db PATH.")
        case SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM, SQLITE_AUTH:
            // SQLite's errno is its last attempt's: on a read-only file system it tries read-only
            // next and reports ENOENT, also where the catalog is there and only its -wal and -shm
            // cannot be made (a write-protected card). The directory says why.
            var reason = error.messageWithReason
            let directory = PathText.directory(of: path)
            // ("attempt to write a readonly database": the file's own mode or owner.)
            var info = statvfs()
            if error.systemErrno == ENOENT && access(directory.isEmpty ? "." : directory, W_OK) != 0
                || error.primaryCode == SQLITE_READONLY && access(path, W_OK) != 0 {
                reason = "\(error.message) (\(String(cString: strerror(errno))))"
            } else if error.primaryCode == SQLITE_CANTOPEN, statvfs(directory.isEmpty ? "." : directory, &info) == 0,
                      info.f_files > 0 && info.f_favail == 0 {
                // SQLite could not make its -wal or -shm file there.
                reason = "\(error.message) (its file system has no inode left for another file)"
            }
            return CamrollError(
                .cannotCreate, "cannot open catalog \(path) for writing: \(reason)",
                hint: "Choose another catalog with --db PATH.")
        case _ where error.isNoSpace:
            // SQLite's "database or disk is full", or an I/O error of a system call refused for
            // space (a write to its log or WAL index): the same to the user, and to what ends a
            // fill and gives the catalog its kept room. `delete` too needs room: it records each
            // deletion before it makes it.
            let quota = error.systemErrno == EDQUOT
            return CamrollError(.ioError, "catalog \(path): \(quota ? "disk quota exceeded" : "no space left on device")",
                                hint: "Make room on the file system that holds it (\(Directories.mountPoint(holding: path) ?? PathText.directory(of: path))).",
                                systemErrno: quota ? EDQUOT : ENOSPC)
        case SQLITE_IOERR:
            return CamrollError(.ioError, "catalog \(path): I/O error: \(error.messageWithReason)")
        case SQLITE_ERROR where ["no such table", "no such column", "has no column named"].contains(where: error.message.contains):
            // Its version says camroll's, its tables say otherwise: changed by hand, or another
            // program's file.
            return CamrollError(
                .dataError, "catalog \(path) does not have camroll's tables: \(error.message)",
                hint: "Choose another catalog with --db PATH.")
        default:
            return CamrollError(.failure, "catalog \(path): \(error.message)")
        }
    }

    /// Runs `body`, turning SQLite failures into user errors naming this catalog.
    func userErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError {
            throw Self.userError(error, path: path)
        }
    }

    // MARK: Writing a run

    public struct NewRun: Sendable {
        public var uuid: String
        public var startedAt: Date
        public var command: String
        public var device: String
        public var requestedCount: Int
        public var requestedFrames: Int
        public var outputTemplate: String
    }

    /// A picture fetched from a URL, as the `sources` table keeps it.
    public struct Source: Sendable, Equatable {
        public var url: String
        public var cachedPath: String
        public var bytes: Int
        public var xxh128: String
        public var etag: String?
        public var lastModified: String?
    }

    public func source(url: String) throws -> Source? {
        try userErrors {
            let row = try database.prepare(
                "SELECT cached_path, bytes, xxh128, etag, last_modified FROM sources WHERE url = ?"
            ).bind(.text(url))
            guard try row.step() else { return nil }
            return Source(
                url: url, cachedPath: row.text(0) ?? "", bytes: row.int(1), xxh128: row.text(2) ?? "",
                etag: row.text(3), lastModified: row.text(4))
        }
    }

    /// Records a download (new or changed), or — `checkedOnly` — that the server confirmed the
    /// cached copy is still current.
    public func recordSource(_ source: Source, at time: Date = Date(), checkedOnly: Bool = false) throws {
        try userErrors {
            if checkedOnly {
                try database.prepare("UPDATE sources SET checked_at = ? WHERE url = ?")
                    .bind(.text(Timestamp.iso8601(time)), .text(source.url)).run()
                return
            }
            try database.prepare(
                """
                INSERT INTO sources(url, cached_path, bytes, xxh128, etag, last_modified, fetched_at, checked_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(url) DO UPDATE SET cached_path = excluded.cached_path, bytes = excluded.bytes,
                    xxh128 = excluded.xxh128, etag = excluded.etag, last_modified = excluded.last_modified,
                    fetched_at = excluded.fetched_at, checked_at = excluded.checked_at
                """
            ).bind(
                .text(source.url), .text(source.cachedPath), .int(source.bytes), .text(source.xxh128),
                .optional(source.etag), .optional(source.lastModified), .text(Timestamp.iso8601(time)),
                .text(Timestamp.iso8601(time))
            ).run()
        }
    }

    /// Whether every commit reaches the disk before it returns (`--fsync`: a save the run
    /// reported is in the catalog after a power cut, as its file is on the disk). Otherwise
    /// SQLite's NORMAL, which in WAL mode may lose the last commits to a power cut but never
    /// the catalog's consistency; `verify --repair` then finds their files by the run's row,
    /// which `beginRun` always syncs.
    public func syncEveryCommit(_ on: Bool) throws {
        try userErrors { try database.execute(on ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL") }
        syncsEveryCommit = on
    }
    private(set) var syncsEveryCommit = false

    /// Inserts the run as `running`, takes its lock (`RunLock`) and commits, before anything is
    /// saved: whoever sees the row can also see that its writer is alive. The commit is synced
    /// (with the catalog's tables, where they are new): after a power cut the row must still
    /// be there for repair to know the run's files, which may have reached the disk.
    /// Up to this many pages (256 kB of 4 KiB pages), `refuseIfDamaged` checks the whole
    /// catalog: PRAGMA quick_check, 38 µs a page measured (982 pages took 37 ms, against 1.2 ms
    /// for the run row's commit): 2.4 ms at most, on the catalog's thread, beside the capture.
    static let wholeCheckPages = 64

    /// Exit 65 when the catalog's pages are damaged, before a run writes anything into it (or a
    /// file beside it): a run recorded into a malformed catalog can make the damage worse, and
    /// nothing read from it afterwards can be trusted. At a bounded cost, paid on the catalog's
    /// thread while the first frame is captured and encoded: the whole catalog with PRAGMA
    /// quick_check when it has at most `wholeCheckPages` pages; a larger one, the pages the
    /// run's writes go through — page 1 and the schema, the last leaf of `runs`, `captures`,
    /// `thumbnails` and `saves` and the way down to it, the index pages where the run's UUID and the first paths
    /// of its template go — read with SQLite's cell size check on, and the free-page list's count
    /// against the file's (the pages of a list gone wrong would be handed out twice): a few dozen
    /// pages, whatever the catalog's size. Damage elsewhere in a large catalog is `verify`'s to find.
    public func refuseIfDamaged(runUUID: String, pathPrefix: String) throws {
        func damaged(_ problem: String) -> CamrollError {
            CamrollError(
                .dataError, "catalog \(path) is damaged, so nothing is saved: \(problem)",
                hint: "'camroll verify --db \(path)' reports it; 'sqlite3 \(path) .recover' may save what can be read. Or choose another catalog with --db.")
        }
        do {
            let pages = try database.scalarInt("PRAGMA page_count") ?? 0
            if pages <= Self.wholeCheckPages {
                let result = try database.scalarText("PRAGMA quick_check(1)") ?? ""
                guard result == "ok" else {
                    throw damaged(String(result.split(separator: "\n").first { !$0.hasPrefix("*** in database") } ?? Substring(result)))
                }
                return
            }
            try database.execute("PRAGMA cell_size_check=ON")
            defer { try? database.execute("PRAGMA cell_size_check=OFF") }
            let free = try database.scalarInt("PRAGMA freelist_count") ?? 0
            guard free >= 0, free < pages else { throw damaged("its list of free pages counts \(free) of \(pages) pages") }
            _ = try database.scalarInt("SELECT count(*) FROM sqlite_master")
            for table in ["runs", "captures", "saves"] { _ = try database.scalarInt("SELECT max(id) FROM \(table)") }
            _ = try database.scalarInt("SELECT max(capture_id) FROM thumbnails")
            _ = try database.prepare("SELECT id FROM runs WHERE uuid >= ? ORDER BY uuid LIMIT 2").bind(.text(runUUID)).stepInt()
            _ = try database.prepare("SELECT id FROM saves WHERE path >= ? ORDER BY path LIMIT 2").bind(.text(pathPrefix)).stepInt()
            _ = try database.scalarInt("SELECT max(capture_id) FROM saves")
        } catch let error as DatabaseError where error.primaryCode == SQLITE_CORRUPT || error.primaryCode == SQLITE_NOTADB {
            throw damaged(error.message)
        }
    }

    public func beginRun(_ run: NewRun) throws -> Int {
        let lock = try runLock ?? RunLock(catalog: path)
        runLock = lock
        if !syncsEveryCommit { try userErrors { try database.execute("PRAGMA synchronous=FULL") } }
        defer { if !syncsEveryCommit { try? database.execute("PRAGMA synchronous=NORMAL") } }
        return try userErrors {
            try database.transaction {
                try database.prepare(
                    """
                    INSERT INTO runs(uuid, started_at, command, device, requested_count, status,
                                     output_template, requested_frames, pid)
                    VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?)
                    """
                ).bind(
                    .text(run.uuid), .text(Timestamp.iso8601(run.startedAt)), .text(run.command),
                    .text(run.device), .int(run.requestedCount), .text(run.outputTemplate),
                    .int(run.requestedFrames), .int(Int(getpid()))
                ).run()
                let id = database.lastInsertRowID
                try lock.hold(run: id)
                return id
            }
        }
    }

    /// Prepares the statements a run's first photo and its end use — the capture's row, a save's
    /// row and the marking of the rows it replaces, the run's end — before they are needed:
    /// `BatchSaver` has this done on the catalog's thread while the first frame is encoded. A
    /// statement prepared is SQLite's parser and code generator run; in a one-photo process
    /// that work (code run once: under qemu, code translated first) would otherwise fall
    /// between the frame and its file, and between the file and the exit.
    public func prepareRunStatements() throws {
        try userErrors {
            _ = try captureInsertion()
            _ = try pathReplacedMarking()
            _ = try savedRowsInsertion(rows: 1)
            _ = try runEndUpdate()
        }
    }

    /// What a run saved, as its summary counts it: `runs.saved_count`, `saved_bytes` and
    /// `saving_us`. Its MB/s is `bytes` over `savingMicroseconds` (`RunFigures`), wherever it
    /// is shown.
    public struct RunTotals: Sendable, Equatable {
        public var saves: Int
        public var bytes: Int
        /// Time spent saving (writing, naming, recording), not capturing or pausing.
        public var savingMicroseconds: Int

        public init(saves: Int, bytes: Int, savingMicroseconds: Int) {
            self.saves = saves
            self.bytes = bytes
            self.savingMicroseconds = savingMicroseconds
        }
    }

    /// How a run ended: its status, the error that ended it (if one did), when, and what it
    /// saved (nil where that is not known: a run closed by `verify --repair`).
    public struct RunEnd: Sendable {
        public var id: Int
        public var status: RunStatus
        public var error: String?
        public var at: Date
        public var totals: RunTotals?

        public init(id: Int, status: RunStatus, error: String?, at: Date = Date(), totals: RunTotals? = nil) {
            self.id = id
            self.status = status
            self.error = error
            self.at = at
            self.totals = totals
        }
    }

    public func finishRun(_ id: Int, status: RunStatus, error: String?, at: Date = Date(), totals: RunTotals? = nil) throws {
        try userErrors { try updateRunEnd(RunEnd(id: id, status: status, error: error, at: at, totals: totals)) }
    }

    private func updateRunEnd(_ end: RunEnd) throws {
        try runEndUpdate()
            .bind(.text(end.status.rawValue), .optional(end.error), .text(Timestamp.iso8601(end.at)),
                  .optional(end.totals?.saves), .optional(end.totals?.bytes), .optional(end.totals?.savingMicroseconds),
                  .int(end.id))
            .run()
    }

    /// A run's totals are written, never cleared: a run closed again without them keeps those it has.
    private func runEndUpdate() throws -> Statement {
        try kept(
            &updateRunEnd,
            """
            UPDATE runs SET status = ?, error = ?, finished_at = ?, saved_count = coalesce(?, saved_count),
                            saved_bytes = coalesce(?, saved_bytes), saving_us = coalesce(?, saving_us)
            WHERE id = ?
            """)
    }

    /// The statement kept in `slot`, prepared from `sql` and kept there the first time.
    private func kept(_ slot: inout Statement?, _ sql: @autoclosure () -> String) throws -> Statement {
        if let statement = slot { return statement }
        let statement = try database.prepare(sql())
        slot = statement
        return statement
    }

    public struct NewCapture: Sendable {
        public var runID: Int
        public var uuid: String
        public var capturedAt: Date
        public var frameSequence: Int?
        public var pixelFormat: String
        public var width: Int
        public var height: Int
        public var jpegQuality: Int?
        public var jpegBytes: Int
        public var xxh128: String
        public var thumbnail: [UInt8]?
        /// The `--timestamp`/`--title` banner's texts drawn into it, one a line; nil: none.
        public var banner: String? = nil
    }

    /// The capture's row and its thumbnail's, committed together (one commit, one sync with
    /// `--fsync`).
    public func addCapture(_ capture: NewCapture) throws -> Int {
        try userErrors {
            func insert() throws -> Int {
                try captureInsertion().bind(
                    .int(capture.runID), .text(capture.uuid), .text(Timestamp.iso8601(capture.capturedAt)),
                    .optional(capture.frameSequence), .text(capture.pixelFormat), .int(capture.width),
                    .int(capture.height), .optional(capture.jpegQuality), .int(capture.jpegBytes),
                    .text(capture.xxh128), capture.banner.map { .text($0) } ?? .null
                ).run()
                let id = database.lastInsertRowID
                if let thumbnail = capture.thumbnail {
                    try kept(&insertThumbnail, "INSERT INTO thumbnails(capture_id, jpeg) VALUES (?, ?)")
                        .bind(.int(id), .blob(thumbnail)).run()
                }
                return id
            }
            return capture.thumbnail == nil ? try insert() : try database.transaction(insert)
        }
    }

    private func captureInsertion() throws -> Statement {
        try kept(
            &insertCapture,
            """
            INSERT INTO captures(run_id, uuid, captured_at, frame_sequence, pixel_format, width,
                                 height, jpeg_quality, jpeg_bytes, xxh128, banner)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
    }

    public struct NewSave: Sendable {
        public var captureID: Int
        public var seq: Int
        public var path: String
        public var bytes: Int
        public var xxh128: String
        public var savedAt: Date
        public var durationMicroseconds: Int
        public var synced: Bool
        /// Which of `--jobs` writers saved it (1…N); nil with one.
        public var job: Int? = nil
        /// The directory it was saved into (`saves.directory_device`, `directory_inode`).
        public var directory: FileIdentity? = nil
    }

    /// Inserts the `saved` rows of `saves` in one transaction, and marks `replaced` every earlier
    /// row of their paths, in the catalog or in the batch (`markEarlierRowsReplaced`).
    ///
    /// SQLite checks `saves.status IN (…six states…)` by building a temporary b-tree of the six
    /// names for every row written: half of the catalog thread's work in a run of small files
    /// (callgrind: 66 000 instructions a row with the check, 31 000 without). The two statements
    /// run here write only the literal states 'saved' and 'replaced', both in the list, so the
    /// check is off while they run and on again for every other statement of the connection.
    /// (Switching it makes SQLite expire every prepared statement: each batch parses its
    /// statements again, one more reason for many rows a statement.) So is the foreign key check
    /// of each row's capture, which looks up the capture's row for every save (7% of the
    /// catalog thread's instructions a row, callgrind over 10 000 saves): every row here names a
    /// capture committed before its file was saved (`BatchSaver`) or found in the catalog
    /// (`Repair`). A batch of one row — one photo's, or a slow run's — keeps both checks, which
    /// cost one row little, and with them the statements `prepareRunStatements` prepared.
    ///
    /// `thenFinishing`: the run's end (`finishRun`) in the same transaction, after the rows —
    /// a run's last rows and its end in one commit (with `--fsync`, one sync) instead of two.
    /// (With the check off, if it is: the status written is one of `RunStatus`'s own.)
    public func recordSaves(_ saves: [NewSave], thenFinishing end: RunEnd? = nil) throws {
        let checksOff = saves.count > 1
        if checksOff { try database.execute("PRAGMA ignore_check_constraints=ON; PRAGMA foreign_keys=OFF") }
        defer { if checksOff { try? database.execute("PRAGMA ignore_check_constraints=OFF; PRAGMA foreign_keys=ON") } }
        try database.transaction {
            switch saves.count {
            case 0:
                break  // the run's end alone
            case 1:
                // A single photo's row (or a slow run's): the statement for one path, before
                // the insert. SQLite plans it with far less of its code than the batch's join,
                // and in a one-photo process most code runs once: under qemu, which translates
                // each piece of code it meets, 1 000 blocks of ~30 000 (make bench-startup).
                try markRowsReplaced(ofPath: saves[0].path)
                try insertSavedRows(saves)
            default:
                let lastBefore = try lastSaveID()
                try insertSavedRows(saves)
                try markEarlierRowsReplaced(since: lastBefore)
            }
            if let end { try updateRunEnd(end) }
        }
    }

    /// A file a run saved, as its rows tell it.
    public struct SavedFile: Sendable {
        public var path: String
        public var bytes: Int
        public var xxh128: String
        public var captureID: Int
        public var width: Int
        public var height: Int
    }

    /// The files run `id` saved and still has, in the order saved.
    public func savedFiles(ofRun id: Int) throws -> [SavedFile] {
        let statement = try database.prepare("""
            SELECT s.path, s.bytes, s.xxh128, c.id, c.width, c.height FROM saves s JOIN captures c ON c.id = s.capture_id
            WHERE c.run_id = ? AND s.status = 'saved' ORDER BY c.id, s.seq
            """).bind(.int(id))
        var files: [SavedFile] = []
        while try statement.step() {
            files.append(SavedFile(
                path: statement.text(0) ?? "", bytes: statement.int(1), xxh128: statement.text(2) ?? "",
                captureID: statement.int(3), width: statement.int(4), height: statement.int(5)))
        }
        return files
    }

    private func lastSaveID() throws -> Int {
        try database.scalarInt("SELECT coalesce(max(id), 0) FROM saves") ?? 0
    }

    /// Marks `replaced` every saved, missing or corrupt row that has a later row of its path
    /// among the rows above `lastBefore`: one statement for a whole batch, after its inserts (a
    /// statement for each row cost 5 600 of the catalog thread's 24 400 instructions a row,
    /// callgrind over 2000 saves, most of it opening cursors to find, for a new path, nothing).
    /// Right whatever else was inserted meanwhile: a row with a later row of its path is replaced.
    /// Equalities, not `status IN (…)`: SQLite builds a temporary b-tree of an IN list of more
    /// than two values each time it finds such a row, and every save of a path saved before
    /// finds one (a benchmark reusing its names fell from 23 000 to 8 000 saves a second).
    private func markEarlierRowsReplaced(since lastBefore: Int) throws {
        try kept(
            &markReplaced,
            """
            UPDATE saves SET status = 'replaced' WHERE id IN (
                SELECT earlier.id FROM saves AS new
                JOIN saves AS earlier ON earlier.path = new.path AND earlier.id < new.id
                WHERE new.id > ?
                  AND (earlier.status = 'saved' OR earlier.status = 'missing' OR earlier.status = 'corrupt'))
            """
        ).bind(.int(lastBefore)).run()
    }

    /// Marks `replaced` every saved, missing or corrupt row of `path`: before a row of it is
    /// inserted, `markEarlierRowsReplaced` for a batch of one.
    private func markRowsReplaced(ofPath path: String) throws {
        try pathReplacedMarking().bind(.text(path)).run()
    }

    private func pathReplacedMarking() throws -> Statement {
        try kept(
            &markPathReplaced,
            "UPDATE saves SET status = 'replaced' WHERE path = ? AND (status = 'saved' OR status = 'missing' OR status = 'corrupt')")
    }

    /// Inserts `saved` rows, up to `rowsPerInsert[0]` in one statement: each statement run costs
    /// SQLite its parse (see `recordSaves`), start and halt, and camroll its binding, whatever
    /// its number of rows. With this, the texts bound in place and the timestamps written
    /// without gmtime_r, the catalog's thread went from 22 300 to 14 600 instructions a row
    /// (callgrind; docs/benchmarks.md, Findings behind the code).
    /// Any earlier row for the same path no longer describes the file there (it was replaced
    /// with `--overwrite`, or deleted by hand and saved again): `recordSaves` marks it
    /// `replaced` in the same transaction, so that deleting its run cannot remove this file.
    private func insertSavedRows(_ saves: [NewSave]) throws {
        var start = saves.startIndex
        while start < saves.endIndex {
            let count = Self.rowsPerInsert.first { $0 <= saves.endIndex - start }!
            let statement = try savedRowsInsertion(rows: count)
            var values: [SQLValue] = []
            values.reserveCapacity(count * 11)
            for save in saves[start..<start + count] {
                // One append a value: an array literal of the nine would be allocated a row.
                values.append(.int(save.captureID))
                values.append(.int(save.seq))
                values.append(.text(save.path))
                values.append(.int(save.bytes))
                values.append(.text(save.xxh128))
                values.append(.text(Timestamp.iso8601(save.savedAt)))
                values.append(.int(save.durationMicroseconds))
                values.append(.int(save.synced ? 1 : 0))
                values.append(.optional(save.job))
                values.append(.optional(save.directory.map { Int(Int64(bitPattern: $0.device)) }))
                values.append(.optional(save.directory.map { Int(Int64(bitPattern: $0.inode)) }))
            }
            try statement.bind(values).run()
            start += count
        }
    }

    private func savedRowsInsertion(rows count: Int) throws -> Statement {
        try kept(
            &insertSaves[count],
            """
            INSERT INTO saves(capture_id, seq, path, bytes, xxh128, saved_at, duration_us, synced, status, job, directory_device, directory_inode)
            VALUES \(Self.savedRowValues)\(String(repeating: ", " + Self.savedRowValues, count: count - 1))
            """)
    }

    /// The row counts of the insert statements, largest first; a batch takes the largest that
    /// fits, so that one photo's row prepares only the one-row statement (a statement prepared
    /// is SQLite's parser and code generator run, which one photo's time to its file pays).
    private static let rowsPerInsert = [64, 16, 4, 1]
    private static let savedRowValues = "(?, ?, ?, ?, ?, ?, ?, ?, 'saved', ?, ?, ?)"
}

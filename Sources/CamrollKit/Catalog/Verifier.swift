import CLinux
import FoundationEssentials
import Glibc
import Synchronization

/// `camroll verify`: reads every saved file back, past the page cache, and compares its size
/// and XXH3-128 with the catalog — like f3, but for the files camroll itself wrote.
public final class Verifier {
    public enum Outcome: String, Sendable, CaseIterable {
        case ok, corrupt, missing
        /// The file holds another save's content: a write that landed in the wrong place
        /// (wrap-around on a fake-capacity card). Only detectable when copies differ (`--stamp`).
        case aliased
        /// Replaced with `--overwrite` by a later save under another spelling of its name, on a
        /// file system that ignores case (FAT, exFAT, SMB): the two names are one file. What was
        /// asked for, not a problem; `--repair` marks the row `replaced`, as a save to the same
        /// spelling does at once.
        case replaced
    }

    public struct Problem: Sendable {
        public var saveID: Int
        public var path: String
        public var outcome: Outcome
        public var detail: String
    }

    public struct Report: Sendable {
        public var counts: [Outcome: Int] = [:]
        public var problems: [Problem] = []
        public var bytesRead = 0
        public var elapsedMicroseconds = 0
        public var repair: Repair.Result?
        public var cancelled = false
        /// Paths asked for that the catalog has no save of: nothing was checked for them.
        public var unknownPaths: [String] = []
        /// The catalog's bytes of the files in each outcome, as f3read counts data: ok, lost
        /// (missing), corrupted, overwritten (aliased).
        public var bytes: [Outcome: Int] = [:]
        /// For each file found holding the start of a later save of its run: how far apart the
        /// two were written, in bytes of the run's data — the distance at which the device wraps
        /// around, which is its real capacity (less what the file system keeps between them).
        public var wrapDistances: [Int] = []
        /// The directories of missing files that are gone themselves: more likely a card or a
        /// share not mounted than files lost one by one.
        public var goneDirectories: [String] = []

        /// The real capacity of a device that wraps around, from the overwritten files: the
        /// median distance. Nil when nothing was found overwritten by a later save.
        public var estimatedCapacity: Int? {
            guard !wrapDistances.isEmpty else { return nil }
            return wrapDistances.sorted()[wrapDistances.count / 2]
        }

        public var checked: Int { counts.values.reduce(0, +) }
        public var allOK: Bool { checked == (counts[.ok] ?? 0) + (counts[.replaced] ?? 0) && unknownPaths.isEmpty }
    }

    public enum Selection: Sendable {
        case all
        case run(Int)
        case paths([String])

        /// Whole runs, not some files.
        var coversRuns: Bool { if case .paths = self { false } else { true } }
        /// Every row of the catalog.
        var coversCatalog: Bool { if case .all = self { true } else { false } }
    }

    private let catalog: Catalog
    private let cancellation: Cancellation?
    private let progress: ((Int, Int, Int) -> Void)?
    /// Files read at once (`verify --jobs`).
    private let jobs: Int

    /// `progress(done, total, bytesRead)` is called after every file (one call at a time).
    public init(catalog: Catalog, cancellation: Cancellation? = nil, jobs: Int = 1,
                progress: ((Int, Int, Int) -> Void)? = nil) {
        self.catalog = catalog
        self.cancellation = cancellation
        self.jobs = max(1, jobs)
        self.progress = progress
    }

    struct Row {
        var id: Int
        var path: String
        var bytes: Int
        var hash: String
        var status: String
        var runID: Int
        var runUUID: String
        var seq: Int
    }

    public func verify(_ selection: Selection, repair: Bool) throws -> Report {
        var report = Report()
        let begin = monotonicMicroseconds()
        // A catalog whose pages are damaged cannot vouch for anything read from it. Verifying
        // everything checks every page first (its cost is the catalog's, as the verify's is); a
        // run or some paths, the pages their rows are read from: SQLite reports a damaged page
        // it reads (SQLITE_CORRUPT, exit 65 through `userErrors`), and the cost stays the run's,
        // not that of the millions of rows beside it.
        let integrity = try selection.coversCatalog ? catalog.userErrors { try catalog.database.scalarText("PRAGMA quick_check") } ?? "" : "ok"
        guard integrity == "ok" else {
            // SQLite heads the first problem with "*** in database main ***": name the problem.
            let problem = integrity.split(separator: "\n").first { !$0.hasPrefix("*** in database") } ?? Substring(integrity)
            throw CamrollError(
                .dataError, "catalog \(catalog.path) is corrupt: \(problem)",
                hint: "Its files may still be checked with 'xxhsum -H2 -c' from a copy of the rows that can be read.")
        }
        if repair { report.repair = try Repair(catalog: catalog).run(selection) }
        let rows = try catalog.userErrors { try RowQuery(catalog: catalog, selection: selection) }
        // Pages still dirty from the saving cannot be dropped from the cache; written out first,
        // every page can, and each file is then read from the device.
        var fileSystems = FileSystemSync()
        var known: Set<String> = []
        try catalog.userErrors {
            try rows.forEach("s.path") { statement in
                let path = statement.text(0) ?? ""
                fileSystems.add(path)
                if case .paths = selection { known.insert(path) }
            }
        }
        if case .paths(let paths) = selection {
            report.unknownPaths = try paths.map { try AbsolutePath.resolve($0, code: .noInput) }.filter { !known.contains($0) }
        }
        // The path of the last save with a given content: made when a file is first found not
        // to hold its own (most checks find none, and need not hold every row's hash).
        var pathOfHash: [String: String]?
        func path(holding hash: String) throws -> String? {
            if pathOfHash == nil {
                var made: [String: String] = [:]
                try catalog.userErrors {
                    try rows.forEach("s.xxh128, s.path") { made[$0.text(0) ?? ""] = $0.text(1) ?? "" }
                }
                pathOfHash = made
            }
            return pathOfHash?[hash]
        }
        // Where each save of a run was laid on the device, for the wrap-around distance.
        var layouts: [Int: RunLayout] = [:]
        func layout(of row: Row) throws -> RunLayout {
            if let known = layouts[row.runID] { return known }
            let made = try catalog.userErrors { try RunLayout(catalog: catalog, runID: row.runID, near: row.path) }
            layouts[row.runID] = made
            return made
        }
        // Damaged files with no other save's start in them: looked at again once the distance
        // at which the device wraps around is known.
        var unexplained: [(row: Row, problem: Int)] = []

        /// `stamp`, another save's start found in `row`'s file: where that is a later save of
        /// the same run, the distance between their places is where the device wraps around.
        func noteWrap(of row: Row, at stamp: Stamp) throws {
            guard stamp.runUUID == row.runUUID, stamp.seq > row.seq else { return }
            let layout = try layout(of: row)
            if let ours = layout.place(ofByte: stamp.position, in: row.seq, path: row.path), let theirs = layout.offset[stamp.seq] {
                report.wrapDistances.append(theirs - ours)
            }
        }

        var newStatus: [(id: Int, status: String, was: String)] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        // A file deleted (`camroll delete`) or replaced (`--overwrite`) by another process while
        // it was read is neither missing nor damaged: its row has left the saves to check.
        let currentStatus = try catalog.database.prepare("SELECT status FROM saves WHERE id = ?")
        func leftTheCheck(_ row: Row) throws -> Bool {
            let now = try catalog.userErrors { try currentStatus.bind(.int(row.id)).step() ? currentStatus.text(0) : nil }
            currentStatus.reset()  // not left holding a snapshot older than the repair's writing
            return now != row.status && !["saved", "missing", "corrupt"].contains(now ?? "")
        }
        /// Each file of a batch: its outcome, counted, its problem and its row's new status noted.
        func check(_ batch: ArraySlice<Row>, _ reads: [Result<(Int, String), RegularFile.Problem>]) throws {
            for (index, row) in batch.enumerated() {
                let asSaved = { if case .success(let (size, hash)) = reads[index] { size == row.bytes && hash == row.hash } else { false } }()
                if !asSaved, try leftTheCheck(row) { continue }
                let outcome: Outcome
                var detail = ""
                switch reads[index] {
                case .failure(.missing):
                    outcome = .missing
                    detail = "missing"
                case .failure(let problem):  // (not `cannotRead`: `readFiles` throws that)
                    outcome = .corrupt
                    detail = problem.detail
                case .success(let (size, hash)):
                    report.bytesRead += size
                    let asRecorded = size == row.bytes && hash == row.hash
                    let other = try asRecorded ? nil : path(holding: hash)
                    if asRecorded {
                        outcome = .ok
                    } else if let other, other != row.path, Self.oneNameIgnoringCase(row.path, other) {
                        outcome = .replaced
                        detail = "replaced by \(other), the same name where case is ignored"
                    } else if let other, other != row.path {
                        outcome = .aliased
                        detail = "holds the content of \(other)"
                        // A later save of this run whole in this file's place: the device wrapped
                        // around at a save's start (files of one size, as a fill's stamped copies are).
                        if let stamp = Self.foreignStampAtStart(in: row.path, of: row, buffer: &buffer) {
                            try noteWrap(of: row, at: stamp)
                        }
                    } else if let stamp = Self.foreignStamp(in: row.path, of: row, buffer: &buffer) {
                        // Part of a later save landed on this file: the device wrapped around.
                        outcome = .aliased
                        detail = "holds the start of save \(stamp.seq) of \(stamp.runUUID == row.runUUID ? "this run" : "run \(stamp.runUUID)") at byte \(stamp.position)"
                        try noteWrap(of: row, at: stamp)
                    } else {
                        outcome = .corrupt
                        detail = size == row.bytes ? "content differs" : "\(size) bytes, expected \(row.bytes)"
                        unexplained.append((row, report.problems.count))
                    }
                }
                report.counts[outcome, default: 0] += 1
                report.bytes[outcome, default: 0] = report.bytes[outcome, default: 0].addingSaturated(row.bytes)
                if outcome != .ok {
                    report.problems.append(Problem(saveID: row.id, path: row.path, outcome: outcome, detail: detail))
                }
                let status = switch outcome {
                case .ok: "saved"
                case .missing: "missing"
                case .replaced: "replaced"
                case .corrupt, .aliased: "corrupt"
                }
                if status != row.status { newStatus.append((row.id, status, row.status)) }
            }
        }
        var lastID = rows.start
        var done = 0
        while !report.cancelled {
            let batch = try catalog.userErrors { try rows.batch(after: lastID, count: Self.batchSize) }
            guard let last = batch.last else { break }
            lastID = last.id
            let reads = try readFiles(batch, before: (done, report.bytesRead), total: rows.count)
            report.cancelled = reads.count < batch.count
            done += reads.count
            try check(batch.prefix(reads.count), reads)
        }
        if let distance = report.estimatedCapacity, !report.cancelled {
            for (row, problem) in unexplained {
                guard let source = try Self.wrappedSource(of: row, distance: distance, layout: layout(of: row), buffer: &buffer)
                else { continue }
                report.counts[.corrupt, default: 0] -= 1
                report.bytes[.corrupt, default: 0] -= row.bytes
                report.counts[.aliased, default: 0] += 1
                report.bytes[.aliased, default: 0] += row.bytes
                report.problems[problem].outcome = .aliased
                report.problems[problem].detail = "holds save \(source.seq)'s bytes from byte \(source.from)"
            }
        }
        // (One problem at a time: a card not mounted makes millions of them, all in one directory.)
        var missingFrom: Set<String> = []
        var lastDirectory = ""
        for problem in report.problems where problem.outcome == .missing {
            let directory = PathText.directory(of: problem.path)
            if directory != lastDirectory { missingFrom.insert(directory) }
            lastDirectory = directory
        }
        report.goneDirectories = missingFrom.filter { !Directories.isDirectory($0) }.sorted()
        if repair && !newStatus.isEmpty {
            try catalog.userErrors {
                try catalog.database.transaction {
                    // Only a row still as it was read: one deleted or replaced since is not this check's.
                    let update = try catalog.database.prepare("UPDATE saves SET status = ? WHERE id = ? AND status = ?")
                    for row in newStatus {
                        try update.bind(.text(row.status), .int(row.id), .text(row.was)).run()
                        report.repair?.rowsMarked += catalog.database.changes
                    }
                }
            }
        }
        report.elapsedMicroseconds = monotonicMicroseconds() - begin
        return report
    }

    /// Every row's file read (size and hash), `jobs` at a time; the results of the rows before
    /// the first one a cancellation left unread. Throws, once every reader has stopped, when a
    /// file could not be read for a reason of the process's (`RegularFile.Problem.cannotRead`):
    /// no file is then reported damaged for it. Progress counts on from `before` (files, bytes)
    /// towards `total`, the rows being one batch of them.
    private func readFiles(_ rows: [Row], before: (files: Int, bytes: Int), total: Int) throws
        -> [Result<(Int, String), RegularFile.Problem>]
    {
        final class Reads: @unchecked Sendable {
            let lock = Lock()
            var results: [Result<(Int, String), RegularFile.Problem>?]
            var done = 0
            var bytes = 0
            /// The first file that could not be read for the process's reason, and why.
            var stopped: (path: String, error: SystemError)?
            let progress: ((Int, Int, Int) -> Void)?
            init(count: Int, progress: ((Int, Int, Int) -> Void)?) {
                results = Array(repeating: nil, count: count)
                self.progress = progress
            }
        }
        let reads = Reads(count: rows.count, progress: progress)
        let next = Atomic<Int>(0)
        let cancellation = self.cancellation
        let work: @Sendable (Int) -> Void = { _ in
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while cancellation?.isCancelled != true {
                let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard index < rows.count else { return }
                let result = Self.readFile(rows[index].path, buffer: &buffer)
                if case .failure(.cannotRead(let error)) = result {
                    reads.lock.withLock {
                        if reads.stopped == nil { reads.stopped = (rows[index].path, error) }
                    }
                    // The other readers find no row left to take.
                    next.store(rows.count, ordering: .relaxed)
                    return
                }
                reads.lock.withLock {
                    reads.results[index] = result
                    reads.done += 1
                    if case .success(let (size, _)) = result { reads.bytes += size }
                    reads.progress?(before.files + reads.done, max(total, before.files + reads.done), before.bytes + reads.bytes)
                }
            }
        }
        if jobs == 1 { work(0) } else { runOnThreads(jobs, work) }
        if let stopped = reads.stopped { throw RegularFile.Problem.stopError(stopped.error, path: stopped.path, readers: jobs) }
        var results: [Result<(Int, String), RegularFile.Problem>] = []
        for result in reads.results {
            guard let result else { break }
            results.append(result)
        }
        return results
    }

    /// Rows are taken from the catalog a batch at a time, so that a check of a fill of millions
    /// of files holds one batch of rows, and what was found wrong, not every row (1 GB for two
    /// million saves before).
    static let batchSize = 8192

    /// The saves a check covers, in the order of their ids, up to the last one there was when
    /// it began: saves a run makes meanwhile are for the next check.
    struct RowQuery {
        private let catalog: Catalog
        private let filter: String
        private let values: [SQLValue]
        /// How many there were when the check began.
        let count: Int
        /// The id before the first of them.
        let start: Int

        init(catalog: Catalog, selection: Selection) throws {
            self.catalog = catalog
            var filter = "s.status IN ('saved', 'missing', 'corrupt')"
            switch selection {
            case .all: values = []
            case .run(let id):
                filter += " AND c.run_id = ?"
                values = [.int(id)]
            case .paths(let paths):
                filter += " AND s.path IN (" + paths.map { _ in "?" }.joined(separator: ",") + ")"
                values = try paths.map { .text(try AbsolutePath.resolve($0, code: .noInput)) }
            }
            let range = try catalog.database.prepare(
                "SELECT min(s.id), max(s.id), count(*) FROM saves s JOIN captures c ON c.id = s.capture_id WHERE \(filter)"
            ).bind(values)
            _ = try range.step()
            start = range.int(0) - 1
            count = range.int(2)
            self.filter = filter + " AND s.id <= \(range.int(1))"
            range.reset()
        }

        /// The next `count` rows after id `after`. Walked in the order of the saves' ids (CROSS
        /// JOIN keeps SQLite to that order): left to choose, it reads all the run's saves after
        /// `after` through its captures for every batch, to sort them — 54 ms a batch, against
        /// 4, for a run of 900 000 saves in 300 frames: quadratic in the run's size.
        func batch(after: Int, count: Int) throws -> [Row] {
            let statement = try catalog.database.prepare(
                "SELECT s.id, s.path, \(Catalog.plausibleBytes), s.xxh128, s.status, c.run_id, r.uuid, s.seq FROM saves s "
                    + "CROSS JOIN captures c ON c.id = s.capture_id CROSS JOIN runs r ON r.id = c.run_id "
                    + "WHERE \(filter) AND s.id > ? ORDER BY s.id LIMIT ?"
            ).bind(values + [.int(after), .int(count)])
            var rows: [Row] = []
            while try statement.step() {
                rows.append(Row(id: statement.int(0), path: statement.text(1) ?? "", bytes: statement.int(2),
                                hash: statement.text(3) ?? "", status: statement.text(4) ?? "", runID: statement.int(5),
                                runUUID: statement.text(6) ?? "", seq: statement.int(7)))
            }
            return rows
        }

        /// `columns` of every row, one row at a time, kept by no one but `body`.
        func forEach(_ columns: String, _ body: (Statement) throws -> Void) throws {
            let statement = try catalog.database.prepare(
                "SELECT \(columns) FROM saves s JOIN captures c ON c.id = s.capture_id WHERE \(filter) ORDER BY s.id"
            ).bind(values)
            while try statement.step() { try body(statement) }
        }
    }

    /// Where the saves of one run lie on the device: where the file system says (FIEMAP: ext4,
    /// XFS, btrfs), each file's first byte's place on its device; where it does not, as a
    /// file system lays files written one after another, each from where the previous one's
    /// last block ended (deleted saves too: they were written). On a device that wraps around,
    /// a later save's place minus that of the earlier one it landed on is where it wraps.
    struct RunLayout {
        /// Each save's first byte, by seq.
        var offset: [Int: Int] = [:]
        /// (offset, seq, path, bytes), by offset.
        var saves: [(offset: Int, seq: Int, path: String, bytes: Int)] = []
        /// The offsets are places on the device (FIEMAP), not positions in the run's data.
        private(set) var onDevice = false

        init(catalog: Catalog, runID: Int, near path: String) throws {
            let statement = try catalog.database.prepare(
                "SELECT s.seq, \(Catalog.plausibleBytes), s.path FROM saves s JOIN captures c ON c.id = s.capture_id WHERE c.run_id = ? ORDER BY s.seq"
            ).bind([.int(runID)])
            var rows: [(seq: Int, bytes: Int, path: String)] = []
            while try statement.step() { rows.append((statement.int(0), statement.int(1), statement.text(2) ?? "")) }

            var onDevice: [Int: Int] = [:]
            for row in rows {
                guard case .success(let fd) = RegularFile.open(row.path) else { continue }  // gone: no place
                let at = clinux_device_offset(fd, 0)
                close(fd)
                guard at >= 0 else {
                    onDevice = [:]
                    break
                }
                onDevice[row.seq] = Int(at)
            }
            if !onDevice.isEmpty {
                offset = onDevice
                self.onDevice = true
            } else {
                var info = statvfs()
                let directory = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
                let block = statvfs(directory.isEmpty ? "/" : directory, &info) == 0 && info.f_frsize > 0 ? Int(clamping: info.f_frsize) : 4096
                var total = 0
                for row in rows {
                    offset[row.seq] = total
                    total += (row.bytes + block - 1) / block * block
                }
            }
            saves = rows.compactMap { row in offset[row.seq].map { ($0, row.seq, row.path, row.bytes) } }.sorted { $0.offset < $1.offset }
        }

        /// Where byte `byte` of save `seq` (the file at `path`) lies; a byte before the file's
        /// start (a save that began just before it) counted back from its first byte.
        func place(ofByte byte: Int, in seq: Int, path: String) -> Int? {
            guard let start = offset[seq] else { return nil }
            if onDevice, byte > 0, case .success(let fd) = RegularFile.open(path) {
                defer { close(fd) }
                let at = clinux_device_offset(fd, UInt64(byte))
                if at >= 0 { return Int(at) }
            }
            return start + byte
        }

        /// The save laid where `position` is, and how far into it.
        func save(at position: Int) -> (seq: Int, path: String, bytes: Int, from: Int)? {
            var low = 0, high = saves.count
            while low < high {
                let middle = (low + high) / 2
                if saves[middle].offset <= position { low = middle + 1 } else { high = middle }
            }
            guard low > 0 else { return nil }
            let found = saves[low - 1]
            return (found.seq, found.path, found.bytes, position - found.offset)
        }
    }

    /// For a damaged file with no save's start in it: the later save laid `distance` further on,
    /// if this file now holds that save's bytes (at least its first 512 that the other has).
    static func wrappedSource(of row: Row, distance: Int, layout: RunLayout, buffer: inout [UInt8])
        -> (seq: Int, from: Int)?
    {
        guard let ours = layout.offset[row.seq],
              let later = layout.save(at: ours + distance), later.seq != row.seq, later.from < later.bytes,
              let damaged = readAll(row.path, buffer: &buffer), let source = readAll(later.path, buffer: &buffer)
        else { return nil }
        let length = min(damaged.count, source.count - later.from)
        guard length >= min(512, damaged.count), length > 0,
              damaged[0..<length].elementsEqual(source[later.from..<(later.from + length)])
        else { return nil }
        return (later.seq, later.from)
    }

    /// A regular file's bytes (its first `limit`), or nil.
    static func readAll(_ path: String, upTo limit: Int = .max, buffer: inout [UInt8]) -> [UInt8]? {
        guard case .success(let fd) = RegularFile.open(path) else { return nil }
        defer { close(fd) }
        var content: [UInt8] = []
        while content.count < limit {
            let wanted = min(buffer.count, limit - content.count)
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, wanted) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { return nil }
            if count == 0 { return content }
            content += buffer[0..<count]
        }
        return content
    }

    /// A `--stamp` comment that is not this file's own: the start of another save, written over
    /// this one. Nil when there is none (or the file cannot be read again).
    struct Stamp: Equatable {
        var runUUID: String
        var seq: Int
        /// Where in the damaged file that save's first byte is.
        var position: Int
    }

    /// Writes out the file systems that hold the paths it is given, each once: syncfs, not sync,
    /// which would wait for every other mounted file system too (a slow stick, a network share).
    struct FileSystemSync {
        private var synced: Set<UInt> = []
        private var lastDirectory = ""

        mutating func add(_ path: String) {
            let slash = path.lastIndex(of: "/") ?? path.startIndex
            let directory = String(path[..<slash])
            if directory == lastDirectory { return }  // a run's files share a directory
            lastDirectory = directory
            let fd = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { return }  // gone: its files are missing, nothing to write out
            defer { close(fd) }
            var status = stat()
            if fstat(fd, &status) == 0, synced.insert(UInt(status.st_dev)).inserted { syncfs(fd) }
        }
    }

    /// Whether two paths that differ only in case name one file: their file system ignores case
    /// if `path` is found under its name with every letter's case turned (`cASE.JPG`). (Inode
    /// numbers cannot tell: through FUSE each spelling gets its own.)
    static func oneNameIgnoringCase(_ path: String, _ other: String) -> Bool {
        guard path.lowercased() == other.lowercased() else { return false }
        let slash = path.lastIndex(of: "/").map(path.index(after:)) ?? path.startIndex
        let turned = path[slash...].map { $0.isUppercase ? $0.lowercased() : $0.uppercased() }.joined()
        guard turned != path[slash...] else { return false }
        var status = stat()
        return stat(String(path[..<slash]) + turned, &status) == 0
    }

    static func foreignStamp(in path: String, of row: Row, buffer: inout [UInt8]) -> Stamp? {
        guard let content = readAll(path, buffer: &buffer) else { return nil }
        return stamps(in: content).first { $0.runUUID != row.runUUID || $0.seq != row.seq }
    }

    /// The stamp that opens the file at `path` where it is another save's (that save written
    /// whole over this one), read from the file's first bytes only: SOI, the comment's header,
    /// and the at most 120 bytes of text after "camroll run=" that `stamps(in:)` reads.
    static func foreignStampAtStart(in path: String, of row: Row, buffer: inout [UInt8]) -> Stamp? {
        guard let start = readAll(path, upTo: 256, buffer: &buffer) else { return nil }
        return stamps(in: start).first { $0.position == 0 && ($0.runUUID != row.runUUID || $0.seq != row.seq) }
    }

    /// Every stamp comment in `bytes` (`JPEGComment.segment("camroll run=UUID seq=N")` right
    /// after a JPEG's SOI), with the position of that JPEG's SOI.
    static func stamps(in bytes: [UInt8]) -> [Stamp] {
        let marker = Array("camroll run=".utf8)
        var found: [Stamp] = []
        var index = 0
        while let at = Self.find(marker, in: bytes, from: index) {
            // SOI (2 bytes), COM marker (2), length (2), then the text.
            let soi = at - 6
            var end = at + marker.count
            while end < bytes.count, end - at < 120, bytes[end] != 0xFF, bytes[end] != 0 { end += 1 }
            let text = String(decoding: bytes[(at + marker.count)..<end], as: UTF8.self)
            let parts = text.split(separator: " ")
            // The SOI may be cut off: that save began just before this file.
            if soi < 0 || (bytes[soi] == 0xFF && bytes[soi + 1] == 0xD8), parts.count >= 2, parts[1].hasPrefix("seq="),
               let seq = Int(parts[1].dropFirst(4)) {
                found.append(Stamp(runUUID: String(parts[0]), seq: seq, position: soi))
            }
            index = end
        }
        return found
    }

    /// Where `needle` first occurs in `bytes` at or after `start` (memmem).
    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        return bytes.withUnsafeBytes { haystack in
            needle.withUnsafeBytes { pattern in
                clinux_memmem(haystack.baseAddress! + start, haystack.count - start, pattern.baseAddress!, pattern.count)
                    .map { $0 - UnsafeRawPointer(haystack.baseAddress!) }
            }
        }
    }

    /// Size and XXH3-128 of a file, read after dropping its cached pages so the bytes come
    /// from the device, not from memory. Only a regular file is read (`RegularFile.open`).
    static func readFile(
        _ path: String, in directory: Int32 = AT_FDCWD, name: String? = nil, buffer: inout [UInt8]
    ) -> Result<(Int, String), RegularFile.Problem> {
        let fd: Int32
        switch RegularFile.open(path, in: directory, name: name) {
        case .failure(let problem): return .failure(problem)
        case .success(let opened): fd = opened
        }
        defer { close(fd) }
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
        let hasher = XXH128.Streaming()
        var total = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(.from(SystemError("read", path: path)))
            }
            if count == 0 { break }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            total += count
        }
        return .success((total, hasher.hex()))
    }
}

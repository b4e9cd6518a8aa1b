import FoundationEssentials
import Glibc

/// `verify --repair`, before the files are checked: finishes what a killed process left behind.
/// A run whose row still says `running` but whose lock nobody holds (`RunLock`) was cut short
/// (SIGKILL, power loss, a catalog that could not be written): files it put under their names
/// in its last moments may have no row yet, and, where it wrote through temporary names (FAT,
/// FUSE, NFS, --overwrite), the file it was writing may remain under one. Repair adopts the
/// former (only files whose content proves they are that run's), removes the latter (only that
/// process's own temporary files), names any other file under the run's names (left alone), and
/// records the run as failed. A `delete` that was stopped leaves rows `deleting`: repair
/// finishes those. A user's file is never deleted.
public struct Repair {
    public struct Result: Sendable {
        public var runsClosed = 0
        public var filesAdopted = 0
        public var temporaryFilesRemoved = 0
        public var rowsMarked = 0
        public var deletionsFinished = 0
        /// Files under a closed run's names that hold none of its photos, left alone: a save a
        /// power cut stopped between rename and sync where a rename is not atomic (FAT writes
        /// the new name's entry before the file's size and first cluster), or another program's.
        public var unrecognizedFiles: [String] = []
        /// How many of them are empty: saves whose names reached the disk and whose data did not
        /// (a power cut without `--fsync`, when the rows that knew them were lost with it).
        public var emptyUnrecognizedFiles = 0
    }

    let catalog: Catalog
    /// No JPEG camroll writes comes near this; a larger file is not one of its files.
    static let largestAdoptedFile = 1 << 30

    struct Run {
        var id: Int
        var uuid: String
        var template: String
        var pid: Int32
    }

    func run(_ selection: Verifier.Selection) throws -> Result {
        var result = Result()
        // The log copied into the main file every 256 kB rather than every 4 MB: a run cut short
        // at the end of a fill beside its catalog leaves its rows to record in the room that the
        // fill kept for them, and no more (4345 rows on a 20 MB card: 2.6 MB).
        try catalog.userErrors { try catalog.database.execute("PRAGMA wal_autocheckpoint=64") }
        try finishDeletions(selection, into: &result)
        for run in try catalog.userErrors({ try interruptedRuns(selection) }) {
            // Held while the run is repaired, as its writer held it: another repair at the same
            // time leaves the run alone rather than record its files a second time.
            let lock = try RunLock(catalog: catalog.path)
            guard lock.tryHold(run: run.id) else { continue }
            try withExtendedLifetime(lock) {
                // One that finished between the query and the lock has closed it.
                guard try catalog.userErrors({ try isRunning(run.id) }) else { return }
                try repair(run, into: &result)
                try catalog.finishRun(run.id, status: .failed, error: "interrupted: the process ended before finishing the run")
                result.runsClosed += 1
            }
        }
        return result
    }

    private func isRunning(_ run: Int) throws -> Bool {
        try catalog.database.prepare("SELECT 1 FROM runs WHERE id = ? AND status = 'running'").bind(.int(run)).stepInt() != nil
    }

    /// Runs still marked `running` whose writer no longer holds their lock. (`verify` without
    /// --repair names them: files they saved last may have no row.)
    func interruptedRuns(_ selection: Verifier.Selection) throws -> [Run] {
        try runningRuns(selection).interrupted
    }

    /// Runs still marked `running`, by whether their writer holds their lock: saving now (`live`:
    /// `verify` checked only the saves they had recorded when it began) or cut short.
    func runningRuns(_ selection: Verifier.Selection) throws -> (interrupted: [Run], live: [Run]) {
        var runs: (interrupted: [Run], live: [Run]) = ([], [])
        for run in try markedRunning(selection) {
            if RunLock.isHeld(run: run.id, catalog: catalog.path) { runs.live.append(run) } else { runs.interrupted.append(run) }
        }
        return runs
    }

    private func markedRunning(_ selection: Verifier.Selection) throws -> [Run] {
        var sql = "SELECT id, uuid, output_template, pid FROM runs WHERE status = 'running' AND output_template IS NOT NULL"
        if case .run(let id) = selection { sql += " AND id = \(id)" }
        let statement = try catalog.database.prepare(sql)
        var runs: [Run] = []
        while try statement.step() {
            runs.append(Run(id: statement.int(0), uuid: statement.text(1) ?? "", template: statement.text(2) ?? "",
                            pid: Int32(truncatingIfNeeded: statement.int(3))))
        }
        return runs
    }

    /// Rows a stopped `delete` left `deleting`: the file goes if it still holds the saved bytes
    /// (what the user asked), stays if anything else is there now; the row becomes `deleted`.
    private func finishDeletions(_ selection: Verifier.Selection, into result: inout Result) throws {
        // A delete at work now: its rows are `deleting` for the moment, and its own to finish.
        guard !RunLock.isHeld(run: RunLock.deletionByte, catalog: catalog.path) else { return }
        var sql = "SELECT s.id, s.path, \(Catalog.plausibleBytes), s.xxh128, s.directory_device, s.directory_inode "
            + "FROM saves s JOIN captures c ON c.id = s.capture_id WHERE s.status = 'deleting'"
        if case .run(let id) = selection { sql += " AND c.run_id = \(id)" }
        let rows: [(id: Int, path: String, bytes: Int, hash: String, directory: FileIdentity?)] = try catalog.userErrors {
            let statement = try catalog.database.prepare(sql)
            var rows: [(Int, String, Int, String, FileIdentity?)] = []
            while try statement.step() {
                let directory = statement.isNull(4) || statement.isNull(5) ? nil
                    : FileIdentity(device: UInt64(bitPattern: Int64(statement.int(4))), inode: UInt64(bitPattern: Int64(statement.int(5))))
                rows.append((statement.int(0), statement.text(1) ?? "", statement.int(2), statement.text(3) ?? "", directory))
            }
            return rows
        }
        guard !rows.isEmpty else { return }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        // As `delete` does it: only in the directory the file was saved into (SaveDirectories),
        // and never a file a later save of the same path owns now (its row becomes `replaced`).
        let directories = SaveDirectories()
        let laterOwner = try catalog.userErrors { try SaveDeletion(catalog: catalog).laterOwnerQuery() }
        var replaced: Set<Int> = []
        for row in rows {
            if try catalog.userErrors({ try laterOwner.bind(.text(row.path), .int(row.id)).stepInt() }) != nil {
                replaced.insert(row.id)
                continue
            }
            guard case .directory(let directoryFD) = directories.open(PathText.directory(of: row.path), recorded: row.directory) else {
                continue  // gone with its directory, or not the run's directory: nothing of the run's to remove
            }
            let name = PathText.lastComponent(of: row.path)
            switch Verifier.readFile(row.path, in: directoryFD, name: name, buffer: &buffer) {
            case .success(let (size, hash)) where size == row.bytes && hash == row.hash:
                if unlinkat(directoryFD, name, 0) != 0 && errno != ENOENT {
                    // Still there: the row stays `deleting`, for a repair that can remove it.
                    throw Self.cannotRemove(SystemError("unlink", path: row.path))
                }
            case .failure(.cannotRead(let error)):
                // Whether the file is still what was saved is unknown: the row stays `deleting`.
                throw RegularFile.Problem.stopError(error, path: row.path)
            default:
                break
            }
        }
        try catalog.userErrors {
            try catalog.database.transaction {
                let mark = try catalog.database.prepare("UPDATE saves SET status = ? WHERE id = ?")
                for row in rows { try mark.bind(.text(replaced.contains(row.id) ? "replaced" : "deleted"), .int(row.id)).run() }
            }
        }
        result.deletionsFinished += rows.count
    }

    private func repair(_ run: Run, into result: inout Result) throws {
        // A run that wrote to standard output left no files to look for.
        guard run.template != OutputTemplate.standardOutput, let template = try? OutputTemplate(run.template) else { return }
        let pattern = try Regex(template.pathPattern(run: run.id))
        let temporaryPattern = try Regex(AtomicFileWriter.temporaryNamePattern(pid: run.pid))

        let captures = try catalog.userErrors { try self.captures(of: run.id) }
        let recorded = try catalog.userErrors { try self.recordedPaths(of: run.id) }
        let savedByAnyRun = try catalog.userErrors {
            try catalog.database.prepare("SELECT 1 FROM saves WHERE path = ? AND status = 'saved' LIMIT 1")
        }
        let files = try Self.files(under: template.fixedDirectory, depth: template.depthBelowFixedDirectory)
        let patternInAnyCase = pattern.ignoresCase()
        // Made only for a name that is the run's in other letters' case (FAT after a power cut).
        lazy var listed = Set(files)
        lazy var recordedInAnyCase = Set(recorded.map { $0.lowercased() })

        // Recorded a batch at a time: a transaction each took a commit (and its log pages) a
        // file. What was adopted before a failure is recorded all the same.
        var adopted: [Catalog.NewSave] = []
        func recordAdopted() throws {
            guard !adopted.isEmpty else { return }
            try catalog.userErrors { try catalog.recordSaves(adopted) }
            result.filesAdopted += adopted.count
            adopted.removeAll(keepingCapacity: true)
        }
        defer { try? recordAdopted() }
        for path in files {
            let name = PathText.lastComponent(of: path)
            if name.firstMatch(of: temporaryPattern) != nil {
                if unlink(path) == 0 {
                    result.temporaryFilesRemoved += 1
                } else if errno != ENOENT {
                    // The run stays open, so that a repair that can remove it still will.
                    throw Self.cannotRemove(SystemError("unlink", path: path), temporary: true)
                }
                continue
            }
            guard !recorded.contains(path) else { continue }
            let match: Regex<AnyRegexOutput>.Match
            if let exact = path.firstMatch(of: pattern) {
                match = exact
            } else if let anyCase = path.firstMatch(of: patternInAnyCase), Self.foundInAnyCase(path, listed: listed) {
                // FAT after a power cut: a file shown under its short name, 0653.JPG, whose long
                // name (0653.jpg, in the entries before it) the cut lost. The same file to FAT,
                // by either name: the run's, recorded under the name it has now.
                guard !recordedInAnyCase.contains(path.lowercased()) else { continue }
                match = anyCase
            } else {
                continue
            }
            // nil: the file itself cannot be read whole (EIO; on FAT, a name whose size came
            // without its data reads short), or is larger than any photo.
            let bytes: [UInt8]?
            switch RegularFile.read(path, limit: Self.largestAdoptedFile) {
            case .success(let read): bytes = read
            case .failure(.cannotRead(let error)):
                // Not known to be the run's or not: the run stays open for a repair that can read it.
                throw RegularFile.Problem.stopError(error, path: path)
            case .failure(.system), .failure(.tooLarge): bytes = nil
            case .failure: continue  // gone meanwhile, or not a file
            }
            guard let bytes, let (captureID, commentSeq) = identify(bytes, run: run, captures: captures) else {
                // Another run's saved file under the same names is not news.
                if try catalog.userErrors({ try savedByAnyRun.bind(.text(path)).stepInt() == nil }) {
                    result.unrecognizedFiles.append(path)
                    if bytes?.isEmpty == true { result.emptyUnrecognizedFiles += 1 }
                }
                continue
            }
            var seq = commentSeq ?? 0
            if match.output.count > 1, let digits = match.output[1].substring, let number = Int(digits) {
                seq = number
            }
            let modified = RegularFile.modificationDate(path)
            adopted.append(Catalog.NewSave(
                captureID: captureID, seq: seq, path: path, bytes: bytes.count, xxh128: XXH128.hex(of: bytes),
                savedAt: modified ?? Date(), durationMicroseconds: 0, synced: false))
            if adopted.count == 256 { try recordAdopted() }
        }
        try recordAdopted()
    }

    /// Whether the file system finds `path`'s file under its name in other letters' case too
    /// (FAT, exFAT): the name with every letter's case swapped opens a file, and the directory
    /// lists no file by that name (where it does, they are two files).
    static func foundInAnyCase(_ path: String, listed: Set<String>) -> Bool {
        let name = PathText.lastComponent(of: path)
        let swapped = String(name.map { $0.isUppercase ? Character($0.lowercased()) : Character($0.uppercased()) })
        let other = PathText.directory(of: path) + "/" + swapped
        return swapped != name && !listed.contains(other) && access(other, F_OK) == 0
    }

    /// Which of the run's captures this file is a copy of: same bytes, or (with `--stamp`) the
    /// same bytes once this run's comment segment is taken out. Nil: not this run's file.
    private func identify(_ bytes: [UInt8], run: Run, captures: [(id: Int, hash: String)]) -> (Int, Int?)? {
        let hash = XXH128.hex(of: bytes)
        if let capture = captures.first(where: { $0.hash == hash }) { return (capture.id, nil) }
        guard bytes.count > 6, bytes[2] == 0xFF, bytes[3] == 0xFE else { return nil }
        let length = Int(bytes[4]) << 8 | Int(bytes[5])
        guard length >= 2, 4 + length <= bytes.count else { return nil }
        let text = String(decoding: bytes[6..<(4 + length)], as: UTF8.self)
        let prefix = "camroll run=\(run.uuid) seq="
        guard text.hasPrefix(prefix) else { return nil }
        let unstamped = Array(bytes[0..<2]) + Array(bytes[(4 + length)...])
        let original = XXH128.hex(of: unstamped)
        guard let capture = captures.first(where: { $0.hash == original }) else { return nil }
        return (capture.id, JPEGComment.stampedSeq(text.dropFirst(prefix.count)))
    }

    private func captures(of run: Int) throws -> [(id: Int, hash: String)] {
        let statement = try catalog.database.prepare("SELECT id, xxh128 FROM captures WHERE run_id = ?").bind(.int(run))
        var result: [(Int, String)] = []
        while try statement.step() { result.append((statement.int(0), statement.text(1) ?? "")) }
        return result
    }

    private func recordedPaths(of run: Int) throws -> Set<String> {
        let statement = try catalog.database.prepare(
            "SELECT s.path FROM saves s JOIN captures c ON c.id = s.capture_id WHERE c.run_id = ?").bind(.int(run))
        var paths = Set<String>()
        while try statement.step() { if let path = statement.text(0) { paths.insert(path) } }
        return paths
    }

    /// A file repair must remove and cannot: it stops there, what it was finishing left open.
    static func cannotRemove(_ error: SystemError, temporary: Bool = false) -> CamrollError {
        CamrollError(error.accessExitCode, "cannot remove \(temporary ? "the temporary file " : "")\(error.path ?? ""): \(error.reason)")
    }

    /// Regular files `depth` directory levels below `directory` (none where it is gone). Throws
    /// when a directory cannot be listed for the process's reason (no permission, too many open
    /// files): a run closed without its last files would keep them unrecorded for good.
    static func files(under directory: String, depth: Int) throws -> [String] {
        guard let stream = opendir(directory) else {
            if errno == ENOENT || errno == ENOTDIR { return [] }
            throw RegularFile.Problem.stopError(SystemError("opendir", path: directory), path: directory)
        }
        var names: [String] = []
        // The name is read where it lies: an entry is only as long as its name, so copying
        // `d_name` whole (256 bytes) reads past the last entry of readdir's buffer.
        let nameOffset = MemoryLayout<dirent>.offset(of: \.d_name)!
        while true {
            errno = 0
            guard let entry = readdir(stream) else { break }
            let name = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
            if name != "." && name != ".." { names.append(name) }
        }
        // readdir ends with NULL on an error too (a card failing mid-listing): not the end.
        let listingError = errno
        closedir(stream)
        if listingError != 0 {
            throw RegularFile.Problem.stopError(SystemError("readdir", path: directory, errno: listingError), path: directory)
        }
        var result: [String] = []
        for name in names {
            let path = directory == "/" ? "/" + name : directory + "/" + name
            var status = stat()
            guard lstat(path, &status) == 0 else { continue }
            let isDirectory = (status.st_mode & S_IFMT) == S_IFDIR
            if depth == 0 && (status.st_mode & S_IFMT) == S_IFREG { result.append(path) }
            if depth > 0 && isDirectory { result += try files(under: path, depth: depth - 1) }
        }
        return result
    }
}

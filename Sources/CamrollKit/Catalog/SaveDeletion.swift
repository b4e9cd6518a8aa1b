import Glibc

/// Deletes saved files and marks their rows together, one batch at a time, so that any stop
/// leaves catalog and disk in agreement: the batch's rows are committed as `deleting` before
/// its files are unlinked, then as `deleted`; after SIGKILL or power loss `verify --repair`
/// finishes the rows still `deleting`. `camroll delete` and `snap`'s retention (`--keep-*`)
/// both go through it. The caller makes the catalog sync every commit (`syncEveryCommit`)
/// around it: otherwise a power cut can keep the unlinks and lose the marks.
struct SaveDeletion {
    let catalog: Catalog
    /// Delete files even when they no longer match their recorded content.
    var force = false

    struct Target {
        var id: Int
        var path: String
        var bytes: Int
        var hash: String
        var status: String
        /// The directory it was saved into, where its row says.
        var directory: FileIdentity?

        /// A save row's target from a statement's columns `first`…`first + 6`: id, path, bytes,
        /// xxh128, status, directory_device, directory_inode.
        init(_ statement: Statement, from first: Int32 = 0) {
            let directory = statement.isNull(first + 5) || statement.isNull(first + 6) ? nil
                : FileIdentity(device: UInt64(bitPattern: Int64(statement.int(first + 5))),
                               inode: UInt64(bitPattern: Int64(statement.int(first + 6))))
            self.init(id: statement.int(first), path: statement.text(first + 1) ?? "", bytes: statement.int(first + 2),
                      hash: statement.text(first + 3) ?? "", status: statement.text(first + 4) ?? "", directory: directory)
        }

        init(id: Int, path: String, bytes: Int, hash: String, status: String, directory: FileIdentity?) {
            (self.id, self.path, self.bytes, self.hash, self.status, self.directory) = (id, path, bytes, hash, status, directory)
        }
    }

    /// What happened to each file a deletion was asked to remove.
    struct Tally {
        var deleted = 0
        var deletedBytes = 0
        var alreadyMissing = 0
        /// Rows another command changed between this delete's reading and marking them.
        var takenByAnother = 0
        var takenOver = 0
        var refused: [String] = []
        /// Paths that are not a regular file (a symbolic link, a FIFO…): kept, --force or not.
        var notFiles: [String] = []
        /// Files whose directory is not the one their run saved into (kept, --force or not), and
        /// why, a directory at a time.
        var elsewhere = 0
        var elsewhereDirectories: [String] = []
    }

    /// What is done with a file, as it is found now.
    enum Decision {
        /// A later save of the same path owns the file there now (older catalogs may not say so).
        case takenOver
        case alreadyMissing
        /// Still what was saved: `name` in the directory `directory` (a descriptor of the one
        /// its run saved into).
        case unchanged(directory: Int32, name: String)
        /// No longer what was saved: kept, unless `force`.
        case changed(directory: Int32, name: String)
        /// Not a regular file (what it is): never unlinked, even with `force` (it is not a file
        /// camroll wrote).
        case notRegular(String)
        /// Its directory is not the one its run saved into (why): kept, `force` or not.
        case elsewhere(String)
        /// Not known to have changed, nor to be what was saved: neither deleted nor refused.
        case unreadable(SystemError)
        /// Its directory cannot be opened.
        case directoryFailed(SystemError)
    }

    /// Read in its directory, and only in the one its run saved into (`SaveDirectories`).
    func decide(_ target: Target, laterOwner: Statement, directories: SaveDirectories, buffer: inout [UInt8]) throws -> Decision {
        if try laterOwner.bind(.text(target.path), .int(target.id)).stepInt() != nil { return .takenOver }
        let name = PathText.lastComponent(of: target.path)
        let directoryFD: Int32
        switch directories.open(PathText.directory(of: target.path), recorded: target.directory) {
        case .directory(let fd): directoryFD = fd
        case .missing: return .alreadyMissing
        case .elsewhere(let why): return .elsewhere(why)
        case .failed(let error): return .directoryFailed(error)
        }
        switch Verifier.readFile(target.path, in: directoryFD, name: name, buffer: &buffer) {
        case .failure(.missing): return .alreadyMissing
        case .success(let (size, hash)) where size == target.bytes && hash == target.hash: return .unchanged(directory: directoryFD, name: name)
        case .failure(.notRegular(let kind)): return .notRegular(kind)
        case .failure(.cannotRead(let error)): return .unreadable(error)
        default: return .changed(directory: directoryFD, name: name)
        }
    }

    func laterOwnerQuery() throws -> Statement {
        try catalog.database.prepare(
            "SELECT 1 FROM saves WHERE path = ? AND id > ? AND status IN ('saved', 'missing', 'corrupt', 'deleting') LIMIT 1")
    }

    /// Deletes the batch's files (those still as they were saved, or any with `force`) and marks
    /// their rows; counts what happened in `tally`.
    func delete(_ batch: [Target], tally: inout Tally) throws {
        // Marked only where still as read: a row another delete (or a repair) changed since is
        // theirs, and this delete leaves it and its file alone.
        let read = batch.count
        var batch = batch
        try catalog.database.transaction {
            let mark = try catalog.database.prepare("UPDATE saves SET status = 'deleting' WHERE id = ? AND status = ?")
            batch = try batch.filter { target in
                try mark.bind(.int(target.id), .text(target.status)).run()
                return catalog.database.changes == 1
            }
        }
        tally.takenByAnother += read - batch.count
        let laterOwner = try laterOwnerQuery()
        var outcome: [(id: Int, status: String)] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        let directories = SaveDirectories()
        /// Before an error ends the delete: the rows of this batch already dealt with take their
        /// outcome, the others go back to what they were.
        func restoreBatch() {
            try? catalog.database.transaction {
                let restore = try catalog.database.prepare("UPDATE saves SET status = ? WHERE id = ?")
                for row in outcome { try restore.bind(.text(row.status), .int(row.id)).run() }
                for rest in batch where !outcome.contains(where: { $0.id == rest.id }) {
                    try restore.bind(.text(rest.status), .int(rest.id)).run()
                }
            }
        }
        for target in batch {
            // A row a stopped delete left `deleting` whose file is no longer what was saved: the
            // deletion is finished in the catalog and whatever is at the path now is left alone.
            let keptStatus = target.status == "deleting" ? "deleted" : target.status
            let directoryFD: Int32, name: String
            switch try decide(target, laterOwner: laterOwner, directories: directories, buffer: &buffer) {
            case .takenOver:
                outcome.append((target.id, "replaced"))
                tally.takenOver += 1
                continue
            case .alreadyMissing:
                outcome.append((target.id, "deleted"))
                tally.alreadyMissing += 1
                continue
            case .unchanged(let directory, let file):
                (directoryFD, name) = (directory, file)
            case .notRegular(let kind):
                outcome.append((target.id, keptStatus))
                if target.status != "deleting" { tally.notFiles.append("\(target.path) (\(kind))") }
                continue
            case .elsewhere(let why):
                outcome.append((target.id, keptStatus))
                if target.status != "deleting" {
                    tally.elsewhere += 1
                    if tally.elsewhereDirectories.last != why { tally.elsewhereDirectories.append(why) }
                }
                continue
            case .unreadable(let error):
                restoreBatch()
                throw RegularFile.Problem.stopError(error, path: target.path)
            case .directoryFailed(let error):
                restoreBatch()
                throw CamrollError(error.accessExitCode, "cannot delete \(target.path): \(error.description)")
            case .changed(let directory, let file):
                guard force else {
                    outcome.append((target.id, keptStatus))
                    if target.status != "deleting" { tally.refused.append(target.path) }
                    continue
                }
                (directoryFD, name) = (directory, file)
            }
            if unlinkat(directoryFD, name, 0) != 0 {
                // Gone between the read and the unlink: someone else removed it.
                guard errno == ENOENT else {
                    let reason = SystemError("unlink").reason
                    restoreBatch()
                    throw CamrollError(.cannotCreate, "cannot delete \(target.path): \(reason)")
                }
                outcome.append((target.id, "deleted"))
                tally.alreadyMissing += 1
                continue
            }
            outcome.append((target.id, "deleted"))
            tally.deleted += 1
            tally.deletedBytes = tally.deletedBytes.addingSaturated(target.bytes)
        }
        try catalog.database.transaction {
            let mark = try catalog.database.prepare("UPDATE saves SET status = ? WHERE id = ?")
            for row in outcome { try mark.bind(.text(row.status), .int(row.id)).run() }
        }
    }
}

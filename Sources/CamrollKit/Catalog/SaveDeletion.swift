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
    }

    /// What is done with a file, as it is found now.
    enum Decision {
        /// A later save of the same path owns the file there now (older catalogs may not say so).
        case takenOver
        case alreadyMissing
        /// Still what was saved.
        case unchanged
        /// No longer what was saved: kept, unless `force`.
        case changed
        /// Not a regular file: never unlinked, even with `force` (it is not a file camroll wrote).
        case notRegular
        /// Not known to have changed, nor to be what was saved: neither deleted nor refused.
        case unreadable(SystemError)
    }

    func decide(_ target: Target, laterOwner: Statement, buffer: inout [UInt8]) throws -> Decision {
        if try laterOwner.bind(.text(target.path), .int(target.id)).stepInt() != nil { return .takenOver }
        switch Verifier.readFile(target.path, buffer: &buffer) {
        case .failure(.missing): return .alreadyMissing
        case .success(let (size, hash)) where size == target.bytes && hash == target.hash: return .unchanged
        case .failure(.notRegular): return .notRegular
        case .failure(.cannotRead(let error)): return .unreadable(error)
        default: return .changed
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
            switch try decide(target, laterOwner: laterOwner, buffer: &buffer) {
            case .takenOver:
                outcome.append((target.id, "replaced"))
                tally.takenOver += 1
                continue
            case .alreadyMissing:
                outcome.append((target.id, "deleted"))
                tally.alreadyMissing += 1
                continue
            case .unchanged:
                break
            case .notRegular:
                outcome.append((target.id, keptStatus))
                if target.status != "deleting" { tally.refused.append(target.path) }
                continue
            case .unreadable(let error):
                restoreBatch()
                throw RegularFile.Problem.stopError(error, path: target.path)
            case .changed:
                guard force else {
                    outcome.append((target.id, keptStatus))
                    if target.status != "deleting" { tally.refused.append(target.path) }
                    continue
                }
            }
            if unlink(target.path) != 0 {
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

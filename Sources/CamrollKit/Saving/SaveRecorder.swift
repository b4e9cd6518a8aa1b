import FoundationEssentials
import Glibc
import Synchronization

/// Writes the catalog on a thread of its own, so SQLite's work overlaps the writing of the next
/// files instead of adding to it. Save rows are queued and committed in one transaction at most
/// `commitIntervalMicroseconds` later; `flush()` commits everything queued, and every other use
/// of the catalog goes through `begin` (or `closeRun`), on the same thread, so the connection has
/// one user at a time.
///
/// The catalog is opened by the first job on that thread (`opening`), so that opening it (and
/// beginning the run, `begin`) overlaps the first frame's capture and encoding, as the frame's
/// capture row overlaps the writing of its first file.
///
/// When a commit fails (catalog disk full, locked too long, deleted), its rows are kept, not
/// dropped: `failure` tells the saver to stop at once, a last `flush()` tries them once more,
/// and `unrecordedCount` says how many files are left without a row for `verify --repair`.
final class SaveRecorder: @unchecked Sendable {
    /// Opens the catalog, or waits for it to open on another thread; called once, on `thread`.
    private let opening: () throws -> Catalog
    /// On `thread` only: the catalog, or why it could not be opened.
    private var opened: Result<Catalog, Error>?
    /// The catalog's thread: every use of the connection runs on it.
    private let thread = SerialThread(name: "camroll-catalog")
    private let commitIntervalMicroseconds: Int
    private let lock = Lock()
    // Guarded by `lock`:
    private var pending: [Catalog.NewSave] = []
    private var unrecorded: [Catalog.NewSave] = []
    private var drainScheduled = false
    private var failure: Error? { didSet { failed.store(failure != nil, ordering: .releasing) } }
    /// `failure != nil`, for `checkHealthy` at every save without the lock.
    private let failed = Atomic<Bool>(false)

    init(opening: @escaping () throws -> Catalog, commitIntervalMicroseconds: Int = 50_000) {
        self.opening = opening
        self.commitIntervalMicroseconds = commitIntervalMicroseconds
    }

    /// On `thread` only.
    private func openedCatalog() throws -> Catalog {
        if opened == nil { opened = Result { try opening() } }
        return try opened!.get()
    }

    /// Runs `body` with the catalog on its thread, after the jobs already given it, without
    /// waiting for it: what it returns (or throws) is waited for later, through the result.
    func begin<T>(_ body: @escaping @Sendable (Catalog) throws -> T) -> Pending<T> {
        let result = Pending<T>()
        thread.async { [self] in result.settle(Result { try body(try openedCatalog()) }) }
        return result
    }

    /// Records the run's end and checkpoints the catalog, whether or not earlier rows could be
    /// committed (the caller decides whether the run may be closed).
    func closeRun(_ id: Int, status: Catalog.RunStatus, error: String?, totals: Catalog.RunTotals? = nil) throws {
        try thread.sync {
            let catalog = try openedCatalog()
            try catalog.finishRun(id, status: status, error: error, totals: totals)
            catalog.checkpoint()
        }
    }

    /// Commits the rows still queued and the run's end together, in one transaction, then
    /// checkpoints the catalog: one commit (with `--fsync`, one sync) fewer than `flush` and
    /// then `closeRun`. False, with nothing written, where an earlier commit failed, and where
    /// this one does (its rows are then kept as unrecorded, as `flush` keeps them): the caller
    /// goes the long way, `flush`, then `closeRun` once every row is in.
    func flushAndCloseRun(_ end: Catalog.RunEnd) -> Bool {
        thread.sync {
            guard lock.withLock({ failure == nil && unrecorded.isEmpty }), drain(thenFinishing: end) else { return false }
            (try? openedCatalog())?.checkpoint()
            return true
        }
    }

    /// The error of an earlier commit, if one failed: the saver stops at the next save.
    func checkHealthy() throws {
        guard failed.load(ordering: .acquiring) else { return }
        try lock.withLock { if let failure { throw failure } }
    }

    /// Queues a `saved` row for a file already under its final name. Never throws: the file
    /// exists, so its row is kept whatever happens to the catalog.
    func record(_ save: Catalog.NewSave) {
        let schedule: Bool = lock.withLock {
            if failure != nil {
                unrecorded.append(save)
                return false
            }
            pending.append(save)
            defer { drainScheduled = true }
            return !drainScheduled
        }
        if schedule {
            thread.async(afterMicroseconds: commitIntervalMicroseconds) { [self] in drain() }
        }
    }

    /// Commits every queued row (retrying, once, rows an earlier commit failed to write);
    /// returns once they are in the catalog, or throws why they are not.
    func flush() throws {
        thread.sync {
            drain()
            retryUnrecorded()
        }
        try checkHealthy()
    }

    /// Once room was made on a full file system (a fill's end: `SpaceReserve`): the rows it
    /// kept out of the catalog are committed, and if that was all that went wrong, it is
    /// forgotten — the run closes as the fill it is.
    func retryAfterRoomWasMade() {
        thread.sync {
            drain()
            retryUnrecorded()
            lock.withLock {
                if unrecorded.isEmpty, (failure as? CamrollError)?.isNoSpace == true { failure = nil }
            }
        }
    }

    /// Files under their final names whose rows are not in the catalog.
    var unrecordedCount: Int { lock.withLock { unrecorded.count + pending.count } }

    /// On `thread` only. Commits the queued rows, and `end` with them where given; false where
    /// that failed, the rows then kept as unrecorded.
    @discardableResult
    private func drain(thenFinishing end: Catalog.RunEnd? = nil) -> Bool {
        let rows: [Catalog.NewSave] = lock.withLock {
            drainScheduled = false
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
        guard !rows.isEmpty || end != nil else { return true }
        guard let error = commit(rows, thenFinishing: end) else { return true }
        lock.withLock {
            unrecorded += rows
            if failure == nil { failure = error }
        }
        return false
    }

    /// On `thread` only.
    private func retryUnrecorded() {
        let rows: [Catalog.NewSave] = lock.withLock { unrecorded }
        guard !rows.isEmpty else { return }
        if commit(rows) == nil {
            lock.withLock { unrecorded.removeFirst(rows.count) }
        }
    }

    private func commit(_ rows: [Catalog.NewSave], thenFinishing end: Catalog.RunEnd? = nil) -> Error? {
        do {
            let catalog = try openedCatalog()
            try catalog.userErrors { try catalog.recordSaves(rows, thenFinishing: end) }
            try catalog.checkStillInPlace()
            return nil
        } catch {
            return error
        }
    }
}

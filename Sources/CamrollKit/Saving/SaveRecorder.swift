import Dispatch
import Foundation

/// Writes the catalog on a thread of its own, so SQLite's work overlaps the writing of the next
/// files instead of adding to it. Save rows are queued and committed in one transaction at most
/// `commitInterval` later; `flush()` commits everything queued, and every other use of the
/// catalog goes through `perform`, on the same queue, so the connection has one user at a time.
final class SaveRecorder: @unchecked Sendable {
    private let catalog: Catalog
    private let queue = DispatchQueue(label: "camroll.catalog")
    private let commitInterval: DispatchTimeInterval
    private let lock = NSLock()
    // Guarded by `lock`:
    private var pending: [Catalog.NewSave] = []
    private var drainScheduled = false
    private var failure: Error?

    init(catalog: Catalog, commitInterval: DispatchTimeInterval = .milliseconds(50)) {
        self.catalog = catalog
        self.commitInterval = commitInterval
    }

    /// Runs `body` with the catalog, after every queued row has been committed.
    func perform<T>(_ body: (Catalog) throws -> T) throws -> T {
        try flush()
        return try queue.sync { try body(catalog) }
    }

    /// Queues a `saved` row. Throws the error of an earlier commit, if one failed.
    func record(_ save: Catalog.NewSave) throws {
        let schedule: Bool = try lock.withLock {
            if let failure { throw failure }
            pending.append(save)
            defer { drainScheduled = true }
            return !drainScheduled
        }
        if schedule {
            queue.asyncAfter(deadline: .now() + commitInterval) { [self] in drain() }
        }
    }

    /// Commits every queued row; returns once they are in the catalog.
    func flush() throws {
        queue.sync { drain() }
        try lock.withLock { if let failure { throw failure } }
    }

    /// On `queue` only.
    private func drain() {
        let rows: [Catalog.NewSave] = lock.withLock {
            drainScheduled = false
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
        guard !rows.isEmpty else { return }
        do {
            try catalog.userErrors {
                try catalog.database.transaction {
                    for row in rows { try catalog.recordSave(row) }
                }
            }
        } catch {
            lock.withLock { if failure == nil { failure = error } }
        }
    }
}

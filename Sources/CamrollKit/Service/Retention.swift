import FoundationEssentials

/// `--keep-last N`, `--keep-for DURATION`, `--keep-bytes SIZE`: which of a run's photos go, as
/// a pure function of the photos (oldest first) — any combination; a photo any rule lets go is
/// deleted. The newest photo is always kept, whatever the rules say (it is the one just taken,
/// and what `--latest` points at). `--keep-for` counts back from the newest photo, not from
/// now, so that a camera away for a day expires nothing while it is away (as restic's
/// `--keep-within` does).
public struct RetentionPolicy: Sendable, Equatable {
    public var keepLast: Int?
    public var keepForMicroseconds: Int?
    public var keepBytes: Int?

    public init(keepLast: Int? = nil, keepForMicroseconds: Int? = nil, keepBytes: Int? = nil) {
        self.keepLast = keepLast
        self.keepForMicroseconds = keepForMicroseconds
        self.keepBytes = keepBytes
    }

    public var isEmpty: Bool { keepLast == nil && keepForMicroseconds == nil && keepBytes == nil }

    public struct Photo: Sendable, Equatable {
        public var id: Int
        public var bytes: Int
        /// Microseconds since the epoch.
        public var savedAt: Int

        public init(id: Int, bytes: Int, savedAt: Int) {
            self.id = id
            self.bytes = bytes
            self.savedAt = savedAt
        }
    }

    /// How many of `photos` (oldest first) go: always a prefix, the oldest ones.
    public func expiring(_ photos: [Photo]) -> Int {
        guard photos.count > 1, let newest = photos.last else { return 0 }
        var drop = 0
        if let keepLast { drop = max(drop, photos.count - max(1, keepLast)) }
        if let keepForMicroseconds {
            let oldestKept = newest.savedAt - keepForMicroseconds
            drop = max(drop, photos.firstIndex { $0.savedAt >= oldestKept } ?? photos.count - 1)
        }
        if let keepBytes {
            var total = photos.reduce(0) { $0.addingSaturated($1.bytes) }
            var index = 0
            while total > keepBytes && index < photos.count - 1 {
                total -= photos[index].bytes
                index += 1
            }
            drop = max(drop, index)
        }
        return min(drop, photos.count - 1)
    }
}

/// Applies a `RetentionPolicy` to the photos the catalog recorded for one output template
/// (this run's, and earlier runs' of the same service with the same template): never a file the
/// catalog did not record. Deletes through `SaveDeletion`, the path `camroll delete` takes.
final class Retention: @unchecked Sendable {
    let policy: RetentionPolicy
    /// The output template as the runs recorded it (`runs.output_template`).
    let template: String
    /// No save below this id is still on disk: the query starts there, so that a run of weeks
    /// does not read its deleted rows again at every photo.
    private var floor = 0

    init(policy: RetentionPolicy, template: String) {
        self.policy = policy
        self.template = template
    }

    struct Outcome: Sendable {
        var deleted = 0
        var bytes = 0
        /// Kept: no longer what was saved, not regular files, or in a directory other than the
        /// one their run saved into (each said once: the query's floor passes them).
        var refused: [String] = []
    }

    /// Deletes what the policy lets go; run on the catalog's thread, after the newest save's
    /// row was committed.
    func apply(_ catalog: Catalog) throws -> Outcome {
        let statement = try catalog.database.prepare("""
            SELECT s.id, s.path, \(Catalog.plausibleBytes), s.xxh128, s.status, s.directory_device, s.directory_inode,
                   s.saved_at, s.capture_id
            FROM saves s JOIN captures c ON c.id = s.capture_id JOIN runs r ON r.id = c.run_id
            WHERE s.id >= ? AND r.output_template = ? AND s.status IN ('saved', 'missing', 'corrupt')
            ORDER BY s.id
            """).bind(.int(floor), .text(template))
        var targets: [SaveDeletion.Target] = []
        var photos: [RetentionPolicy.Photo] = []
        var captures: [Int] = []
        while try statement.step() {
            captures.append(statement.int(8))
            let target = SaveDeletion.Target(statement)
            let savedAt = (statement.text(7).flatMap(Timestamp.seconds(ofISO8601:)) ?? 0) * 1e6
            targets.append(target)
            photos.append(.init(id: target.id, bytes: target.bytes, savedAt: Int(savedAt)))
        }
        statement.reset()
        let expiring = policy.expiring(photos)
        guard expiring > 0 else {
            floor = targets.first?.id ?? floor
            return Outcome()
        }
        var tally = SaveDeletion.Tally()
        // A delete at work, as `camroll delete` holds it: a repair or a delete beside this one
        // leaves the rows it marks `deleting` to it. (Best effort, as there.)
        let deletionLock = try? RunLock(catalog: catalog.path)
        _ = deletionLock?.holdForDeletion()
        defer { withExtendedLifetime(deletionLock) {} }
        // Each mark synced before the unlinks it covers, as `delete` does.
        let synced = catalog.syncsEveryCommit
        if !synced { try catalog.syncEveryCommit(true) }
        defer { if !synced { try? catalog.syncEveryCommit(false) } }
        for start in stride(from: 0, to: expiring, by: CatalogCommands.deleteBatch) {
            try SaveDeletion(catalog: catalog).delete(Array(targets[start..<min(expiring, start + CatalogCommands.deleteBatch)]), tally: &tally)
        }
        // A photo gone, its capture's thumbnail goes too (nothing shows it any more): what a
        // run of weeks leaves in the catalog per photo is two rows of a few hundred bytes, not
        // a thumbnail of kilobytes each; the thumbnail's page is free for the next one's.
        let gone = Set(captures[0..<expiring]).map(String.init).joined(separator: ",")
        try catalog.database.execute("""
            DELETE FROM thumbnails WHERE capture_id IN (\(gone))
              AND NOT EXISTS (SELECT 1 FROM saves WHERE capture_id = thumbnails.capture_id AND status != 'deleted' AND status != 'replaced')
            """)
        // Those kept (changed, not a file, elsewhere) are said once and left below the floor:
        // refused at every photo after, each would cost two synced commits, an event row and a
        // log line a photo for the rest of the run.
        floor = targets[expiring].id
        let kept = tally.refused + tally.notFiles + tally.elsewhereDirectories.map { "files in \($0)" }
        return Outcome(deleted: tally.deleted + tally.alreadyMissing, bytes: tally.deletedBytes, refused: kept)
    }
}

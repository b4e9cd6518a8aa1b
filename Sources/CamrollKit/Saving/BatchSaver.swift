import FoundationEssentials
import Glibc
import Synchronization

/// What `snap` was asked to do with the frames it takes.
public struct BatchPlan: Sendable {
    /// Saves of each frame (`-n`).
    public var count: Int
    /// Distinct frames (`--frames`).
    public var frames: Int
    /// Pause between frames (`--interval`), in microseconds.
    public var intervalMicroseconds: Int
    /// Give every copy its own JPEG comment (`--stamp`).
    public var stamp: Bool
    /// Save until the file system is full (`--fill`): ENOSPC or EDQUOT ends the run as
    /// completed; `count` is an upper bound.
    public var fill = false
    /// Writers saving at once (`--jobs`), each its own files and sequence numbers.
    public var jobs = 1
    public var template: OutputTemplate
    /// Digits of `{seq}` where the count says nothing of how many there will be (a service
    /// run with no end): nil, as wide as the count.
    public var seqWidth: Int?
    /// `-o -`: each frame's JPEG to standard output instead of saved copies (`count` is 1).
    public var toStandardOutput: Bool { template.text == OutputTemplate.standardOutput }

    public var totalSaves: Int { count * frames }
}

/// Takes frames, turns them into JPEGs and saves each one `count` times, recording every save in
/// the catalog (or, with `-o -`, sends each to standard output, recording its capture).
/// Checks for cancellation between saves; never leaves a partial file behind.
/// With `jobs` > 1 the copies of each frame are shared out among that many threads, each taking
/// the next sequence number when it is free, each with a writer of its own; the rows go to the
/// one catalog thread (`SaveRecorder`).
///
/// The catalog is opened and the run's row committed on that thread while the first frame is
/// taken, encoded, hashed and shrunk to its thumbnail on this one: neither waits for the other
/// until the frame's capture row, and no file is saved before the run's row is committed.
public final class BatchSaver: @unchecked Sendable {
    private let source: FrameSource
    private let pipeline: ImagePipeline
    /// One per job.
    private let writers: [AtomicFileWriter]
    private let recorder: SaveRecorder
    private let reporter: ProgressReporter
    private let cancellation: Cancellation
    private let plan: BatchPlan
    /// Room kept for the catalog on the file system the run fills: a fill's, where the catalog
    /// is on the file system it fills; any other run's there, where its files may not fit.
    private var catalogReserve: SpaceReserve?
    /// The run in the catalog, once its row was waited for (`runStarted`).
    private var started: RunStart?
    /// The catalog's path, known once the run has started.
    private var catalogPath: String { started?.catalogPath ?? "" }
    /// A service run's clock and chores (`snap --every`): nil for a batch.
    var pacing: FramePacing?

    /// A run begun in the catalog.
    private struct RunStart {
        let id: Int
        let catalogPath: String
        /// The catalog's own files (`AtomicFileWriter.protectedFiles`), all there once the run
        /// holds its lock.
        let catalogFiles: [FileIdentity: String]
    }

    /// `catalog` opens the catalog, or waits for it to open elsewhere; it is called once, on the
    /// catalog's thread, as `run` begins.
    public init(
        source: FrameSource, pipeline: ImagePipeline, writer: AtomicFileWriter, catalog: @escaping () throws -> Catalog,
        reporter: ProgressReporter, cancellation: Cancellation, plan: BatchPlan
    ) {
        self.source = source
        self.pipeline = pipeline
        self.writers = [writer] + (1..<max(1, plan.jobs)).map { _ in
            let another = AtomicFileWriter(existing: writer.existing, sync: writer.sync, direct: writer.direct)
            another.directRefused = writer.directRefused
            another.tree = writer.tree
            return another
        }
        self.recorder = SaveRecorder(opening: catalog)
        self.reporter = reporter
        self.cancellation = cancellation
        self.plan = plan
    }

    /// Runs the whole batch. Returns the summary, and the error that ended it early, if any.
    public func run(command: String) throws -> (RunSummary, CamrollError?) {
        let runUUID = UUID().uuidString.lowercased()
        let run = Catalog.NewRun(
            uuid: runUUID, startedAt: Date(), command: command, device: source.deviceName,
            requestedCount: plan.toStandardOutput ? 0 : plan.totalSaves, requestedFrames: plan.frames,
            outputTemplate: plan.template.text)
        let sync = writers[0].sync
        let outputDirectory = plan.template.fixedDirectory
        let runRow = recorder.begin { catalog in
            try catalog.syncEveryCommit(sync)
            try catalog.refuseIfDamaged(runUUID: runUUID, pathPrefix: outputDirectory)
            Trace.mark("catalog checked (catalog)")
            let id = try catalog.beginRun(run)
            Trace.mark("run row committed (catalog)")
            // Now that the run holds its lock, every file of the catalog's is there.
            return RunStart(id: id, catalogPath: catalog.path, catalogFiles: Catalog.ownFiles(catalog.path))
        }
        // Then, while the frame is still being encoded, the statements of the rows to come. Best
        // effort: a statement that could not be prepared now is prepared when it is used, and
        // fails there with the error a user is given.
        _ = recorder.begin { catalog in
            try? catalog.prepareRunStatements()
            Trace.mark("statements ready (catalog)")
        }
        // A second Ctrl-C or SIGTERM exits without waiting for the current write; before it does,
        // the rows of every file already under its name are committed and the run closed. Nor
        // does it wait for the run's row (a catalog locked by another process can hold that up
        // for seconds): until that row is in, no file has been saved, and a run row committed
        // as the process ends is one `verify --repair` closes, as it does a killed run's.
        SignalWatcher.setSecondSignalAction { [gates = writers.map(\.gate), recorder] _ in
            for gate in gates { gate.stop() }
            guard let runID = runRow.settledValue?.id else { return }
            try? recorder.flush()
            try? recorder.closeRun(runID, status: .cancelled, error: "stopped at once by a second signal")
        }
        defer { SignalWatcher.setSecondSignalAction(nil) }

        let state = State(total: plan.totalSaves, startedAt: monotonicMicroseconds(), jobs: writers.count)
        state.progress.openEnded = plan.seqWidth != nil
        var failure: CamrollError?
        do {
            try saveAll(runRow: runRow, runUUID: runUUID, state: state)
        } catch is CancelledWhileWaiting {
            // Ctrl-C while waiting for a camera frame: a cancellation like any other.
        } catch is WriteGate.Stopped {
            // A second signal stopped the writers: its action closes the run as cancelled and
            // ends the process. Until it does, this is a cancellation, not a failure: a `failed`
            // closing from here could otherwise land after the action's, just before the exit.
        } catch {
            failure = Self.userError(error)
        }
        // Where the saving ended before the first frame's capture row (cancelled or failed while
        // the frame was taken), the run's row is waited for here; the catalog's error, if it
        // could not be begun, is the one to report, as it came first.
        let runID = try runStarted(runRow, runUUID: runUUID).id
        state.progress.elapsedMicroseconds = monotonicMicroseconds() - state.startedAt
        Trace.mark("files written")
        if let catalogReserve {
            // The saving is over (a fill's, or a run's that filled the disk, or not): the room
            // kept for the catalog is given back for its last rows.
            catalogReserve.release()
            recorder.retryAfterRoomWasMade()
        }
        // Whatever happened, the rows of the files already saved are committed, and then the
        // run is closed: both in one commit where they can be.
        var status = runStatus(failure: failure, state: state)
        // The run's figures, kept on its row: they outlive its files (`stats` after `delete`).
        let totals = Catalog.RunTotals(
            saves: state.progress.done, bytes: state.progress.bytes, savingMicroseconds: state.progress.savingMicroseconds)
        if recorder.flushAndCloseRun(Catalog.RunEnd(id: runID, status: status, error: failure?.message, totals: totals)) {
            Trace.mark("save rows committed, run closed")
        } else {
            do { try recorder.flush() } catch { failure = failure ?? Self.userError(error) }
            Trace.mark("save rows committed")
            status = runStatus(failure: failure, state: state)
            let unrecorded = recorder.unrecordedCount
            if unrecorded == 0 {
                do {
                    try recorder.closeRun(runID, status: status, error: failure?.message, totals: totals)
                } catch {
                    failure = failure ?? Self.userError(error)
                }
            } else if let reason = failure {
                // Files without rows: the run stays `running`, which is what `verify --repair` looks
                // for once this process (and its run lock) is gone; it records them and closes the run.
                failure = CamrollError(
                    reason.exitCode, reason.message + "; \(unrecorded) saved file(s) have no catalog row",
                    hint: "Run 'camroll verify --repair --db \(catalogPath)' once the catalog can be written: it records them.")
            }
            Trace.mark("run closed")
        }
        let summary = RunSummary(
            runID: runID, runUUID: runUUID, status: status, progress: state.progress,
            latency: state.latency, error: failure?.message, catalogPath: catalogPath, lastPath: state.lastPath,
            pictureSize: state.pictureSize)
        reporter.finished(summary)
        return (summary, failure)
    }

    /// How the run ended: failed with an error, cancelled before its last save, or completed.
    private func runStatus(failure: CamrollError?, state: State) -> Catalog.RunStatus {
        failure != nil ? .failed : cancellation.isCancelled && state.progress.done < plan.totalSaves ? .cancelled : .completed
    }

    /// The run so far; with several jobs, changed under `lock` only.
    private final class State: @unchecked Sendable {
        let lock = Lock()
        var progress: SaveProgress
        var latency = LatencyHistogram()
        let startedAt: Int
        var lastPath: String?
        /// The frame being saved, as encoded.
        var pictureSize: Resolution?
        /// When the last save ended (or, before a frame's first, when its saving began).
        var previousSaveEnd = 0
        /// When the reporter was last given the progress.
        var reportedAt = 0
        /// When `--fill` last asked the file system for its free space.
        var freeSpaceCheckedAt = 0

        init(total: Int, startedAt: Int, jobs: Int) {
            self.progress = SaveProgress(done: 0, total: total, bytes: 0, elapsedMicroseconds: 0)
            self.startedAt = startedAt
            if jobs > 1 { progress.jobs = [SaveProgress.Job](repeating: .init(), count: jobs) }
        }
    }

    /// Waits for the run's row (once) and does what needs it before anything is recorded or
    /// saved: the catalog's files kept from being replaced, the progress's start.
    private func runStarted(_ runRow: Pending<RunStart>, runUUID: String) throws -> RunStart {
        if let started { return started }
        let start = try runRow.value()
        started = start
        for writer in writers { writer.protectedFiles = start.catalogFiles }
        reporter.started(
            runID: start.id, runUUID: runUUID, device: source.deviceName, total: plan.totalSaves,
            template: plan.template.text)
        return start
    }

    private func saveAll(runRow: Pending<RunStart>, runUUID: String, state: State) throws {
        var seqWidth = plan.seqWidth ?? String(plan.totalSaves).count
        let frameWidth = plan.seqWidth ?? String(plan.frames).count
        defer { pacing?.finished(recorder: recorder) }
        for frameIndex in 1...plan.frames {
            if cancellation.isCancelled { return }
            if let pacing {
                guard pacing.awaitFrame() else { return }
            } else if frameIndex > 1 && plan.intervalMicroseconds > 0 {
                waitOrCancel(microseconds: plan.intervalMicroseconds)
                if cancellation.isCancelled { return }
            }
            var frame = try source.nextFrame()
            Trace.mark("frame \(frameIndex) taken")
            // A banner is drawn into the frame's own bytes, which no one else holds: no copy.
            let image = try pipeline.picture(drawingOn: &frame)
            Trace.mark("frame \(frameIndex) encoded")
            let imageHash = XXH128.hex(of: image.bytes)
            Trace.mark("frame \(frameIndex) hashed")
            let thumbnail = try pipeline.thumbnail(of: image)
            Trace.mark("frame \(frameIndex) thumbnail made")
            state.pictureSize = Resolution(width: image.width, height: image.height)
            let runID = try runStarted(runRow, runUUID: runUUID).id
            if frameIndex == 1 { pacing?.runStarted(runID, recorder: recorder) }
            let capture = Catalog.NewCapture(
                runID: runID, uuid: UUID().uuidString.lowercased(), capturedAt: frame.capturedAt,
                frameSequence: frame.sequence, pixelFormat: frame.format.code, width: image.width,
                height: image.height, jpegQuality: image.quality, jpegBytes: image.bytes.count,
                xxh128: imageHash, thumbnail: thumbnail, banner: pipeline.bannerText(for: frame))
            // Committed on the catalog's thread while the frame's first file is written, which
            // takes its name only once the row is in: `verify --repair` knows a killed run's
            // files by their captures' hashes.
            let captureRow = recorder.begin { catalog in
                let id = try catalog.addCapture(capture)
                Trace.mark("frame \(frameIndex) capture row (catalog)")
                return id
            }
            if plan.toStandardOutput {
                _ = try captureRow.value()
                try send(image.bytes, state: state)
                continue
            }
            if frameIndex == 1 {
                let first = plan.template.render(
                    .init(seq: 1, seqWidth: 1, run: runID, frame: 1, frameWidth: 1, time: frame.capturedAt))
                // The longest a file's path is: its number as wide as the count.
                let pathBytes = first.utf8.count + String(plan.totalSaves).count
                let besideTheCatalog = Directories.onOneFileSystem(PathText.directory(of: first), PathText.directory(of: catalogPath))
                if plan.fill, let free = freeBytes(for: first) {
                    // As many digits as the most files that fit (each takes at least its bytes),
                    // not the ten of the upper bound: names that sort, and short.
                    let files = min(plan.totalSaves, max(1, free / max(1, image.bytes.count)))
                    seqWidth = String(files).count
                    state.progress.freeBytes = free
                    if besideTheCatalog {
                        catalogReserve = Self.reserveForTheCatalog(
                            catalogPath, files: plan.totalSaves, of: image.bytes.count, pathBytes: pathBytes)
                        state.progress.keptForCatalogBytes = catalogReserve?.bytes ?? free
                        if catalogReserve == nil {
                            // Too little room to record the files a fill would make there (they
                            // were saved with no row, and repair had no room to add one either):
                            // the file system is as full as a fill can make it.
                            state.progress.filled = true
                            state.progress.freeBytes = 0
                            return
                        }
                    }
                } else if !plan.fill, besideTheCatalog {
                    catalogReserve = Self.reserveForTheCatalog(
                        catalogPath, files: plan.totalSaves, of: image.bytes.count, pathBytes: pathBytes, onlyWhereTheyMayNotFit: true)
                }
            }

            try Self.withJPEG(image.bytes, copies: plan.count) { jpeg in
                let saving = FrameSaving(
                    jpeg: jpeg, wholeJPEG: [jpeg], imageHash: imageHash, runUUID: runUUID, runID: runID,
                    captureRow: captureRow, frameIndex: frameIndex, seqWidth: seqWidth, frameWidth: frameWidth,
                    time: frame.capturedAt)
                // The saving time runs from here, without the capture, the encoding or a pause.
                state.lock.withLock { state.previousSaveEnd = monotonicMicroseconds() }
                if writers.count == 1 {
                    for copy in 1...plan.count where try !save(copy: copy, job: 0, of: saving, state: state) { return }
                } else {
                    // Each job takes the next copy when it is free; the first error stops them all.
                    let next = Atomic<Int>(1)
                    let stopped = Atomic<Bool>(false)
                    let firstError = Locked<Error?>(nil)
                    runOnThreads(writers.count) { [self] job in
                        while !stopped.load(ordering: .relaxed) {
                            let copy = next.wrappingAdd(1, ordering: .relaxed).oldValue
                            guard copy <= plan.count else { return }
                            do {
                                if try !save(copy: copy, job: job, of: saving, state: state) {
                                    stopped.store(true, ordering: .relaxed)
                                }
                            } catch {
                                firstError.withLock { $0 = $0 ?? error }
                                stopped.store(true, ordering: .relaxed)
                            }
                        }
                    }
                    if let error = firstError.withLock({ $0 }) { throw error }
                }
            }
            if state.progress.filled { return }
            if let pacing, let path = state.lastPath {
                pacing.frameSaved(
                    SavedPhoto(path: path, seq: frameIndex * plan.count, time: frame.capturedAt, bytes: image.bytes.count, microseconds: 0),
                    recorder: recorder)
            }
        }
    }

    /// One frame's saving, as every job needs it. Unchecked: `jpeg` points into the frame's
    /// JPEG, which outlives the jobs (saveAll waits for them all before letting go of it).
    private struct FrameSaving: @unchecked Sendable {
        let jpeg: UnsafeRawBufferPointer
        /// `jpeg` as the one piece of an unstamped copy: one array for all of them.
        let wholeJPEG: [UnsafeRawBufferPointer]
        let imageHash: String
        let runUUID: String
        let runID: Int
        /// The frame's capture row, being committed: its id, once it is in.
        let captureRow: Pending<Int>
        let frameIndex: Int
        let seqWidth: Int
        let frameWidth: Int
        let time: Date
    }

    /// Saves copy `copy` of the frame with job `job`'s writer. False once the run is to stop
    /// (cancelled, or the file system full on a fill); throws what failed.
    private func save(copy: Int, job: Int, of frame: FrameSaving, state: State) throws -> Bool {
        if cancellation.isCancelled { return false }
        // The catalog met the full file system before a save did — a commit refused for space,
        // or its WAL index, which took the room kept for it: its rows are committed once that
        // room is given back. The end of a fill all the same; any other run ends as it would
        // had a save met it.
        func catalogFoundTheDiskFull(_ errno: Int32?) throws -> Bool {
            guard plan.fill else {
                throw CamrollError(.ioError, "no space left on device on \(Directories.mountPoint(holding: catalogPath) ?? catalogPath), "
                                   + "which holds the photos and the catalog", systemErrno: errno)
            }
            state.lock.withLock {
                state.progress.filled = true
                state.progress.freeBytes = 0
            }
            return false
        }
        // A catalog that cannot take rows stops the saving at once.
        do {
            try recorder.checkHealthy()
        } catch let error as CamrollError where catalogReserve != nil && error.isNoSpace {
            return try catalogFoundTheDiskFull(error.systemErrno)
        }
        if catalogReserve?.givenBackForAMappedFile == true { return try catalogFoundTheDiskFull(ENOSPC) }
        let seq = (frame.frameIndex - 1) * plan.count + copy
        let path = plan.template.render(
            .init(seq: seq, seqWidth: frame.seqWidth, run: frame.runID, frame: frame.frameIndex,
                  frameWidth: frame.frameWidth, time: frame.time))
        do {
            try saveOne(path: path, seq: seq, of: frame, job: job, state: state)
        } catch let error as CamrollError where error.isNoSpace {
            // XFS (and ext4) hold space for what the page cache has not written out yet, at its
            // worst: on XFS ~30 KB for a 10 KB photo, and a new name is refused once those holds
            // take what is free (a fill ended at 65 MB of 290). Written out, they give most of it
            // back: full is what is still full after that.
            var final = error
            if Directories.writeOutFileSystem(holding: path) {
                do {
                    try saveOne(path: path, seq: seq, of: frame, job: job, state: state)
                    return true
                } catch let again as CamrollError where again.isNoSpace {
                    final = again
                }
            }
            guard plan.fill else { throw final }
            // The end of a fill: the file being written was removed by the writer.
            state.lock.withLock {
                state.progress.filled = true
                state.progress.freeBytes = freeBytes(for: path) ?? 0
            }
            return false
        }
        return true
    }

    /// Room kept for a catalog on the file system the run saves to (`SpaceReserve`), sized for
    /// the rows of the files of `bytes` the run can make there (at most `limit`), each taking
    /// whole blocks, their paths `pathBytes` long; nil where there is not that much room. With
    /// `onlyWhereTheyMayNotFit` (a run that is not a fill), nil too where the run's files and
    /// their rows (a third of that room, which is kept three times over) fit in what is free:
    /// such a run does not fill the disk (unless something else does meanwhile), and keeping
    /// the room would only end it sooner — a photo that fits on a nearly full disk is saved.
    private static func reserveForTheCatalog(
        _ catalogPath: String, files limit: Int, of bytes: Int, pathBytes: Int, onlyWhereTheyMayNotFit: Bool = false
    ) -> SpaceReserve? {
        let catalogDirectory = PathText.directory(of: catalogPath)
        var info = statvfs()
        guard statvfs(catalogDirectory, &info) == 0 else { return nil }
        let block = max(1, Int(info.f_frsize))
        let fileBytes = (bytes + block - 1) / block * block
        let files = min(limit, info.availableBytes / max(1, fileBytes))
        guard let size = SpaceReserve.size(files: files, pathBytes: pathBytes, free: info.availableBytes) else { return nil }
        if onlyWhereTheyMayNotFit {
            let (needed, overflow) = limit.multipliedReportingOverflow(by: fileBytes)
            if !overflow && needed <= info.availableBytes - size / 3 { return nil }
        }
        return SpaceReserve(in: catalogDirectory, bytes: size)
    }

    /// Space left for an unprivileged writer on the file system that will hold `path`: its
    /// directory's, or before that directory is made, its nearest existing parent's (a file
    /// standing in its way too: the fill then fails at once, and is still a fill).
    private func freeBytes(for path: String) -> Int? {
        var directory = Substring(path)
        var info = statvfs()
        repeat {
            directory = directory.lastIndex(of: "/").map { directory[..<$0] } ?? ""
            if statvfs(directory.isEmpty ? "/" : String(directory), &info) == 0 {
                return info.availableBytes
            }
        } while (errno == ENOENT || errno == ENOTDIR) && !directory.isEmpty
        return nil
    }

    /// The frame's JPEG for its `copies` to be written from: where there are several, at the
    /// start of a page (a copy, unless the array's own storage is), so that each copy's bytes lie
    /// in the file at the offset within the page they have in memory — at 0, or after a stamp
    /// padded to 64 bytes at the offset within 64 bytes. The kernel copies them faster so (see
    /// `JPEGComment.stamp`; page-aligned rather than 64-byte-aligned, a 23 KB copy's write(2) on
    /// tmpfs took 0.3-0.5 µs less of its ~11: perf, alternating runs): a frame's one copy is not
    /// worth making another for.
    private static func withJPEG<R>(
        _ bytes: [UInt8], copies: Int, _ body: (UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R {
        try bytes.withUnsafeBytes { jpeg in
            let alignment = 4096
            guard copies > 1, let base = jpeg.baseAddress, Int(bitPattern: base) % alignment != 0 else { return try body(jpeg) }
            let aligned = UnsafeMutableRawBufferPointer.allocate(byteCount: jpeg.count, alignment: alignment)
            defer { aligned.deallocate() }
            aligned.copyMemory(from: jpeg)
            return try body(UnsafeRawBufferPointer(aligned))
        }
    }

    private func saveOne(path: String, seq: Int, of frame: FrameSaving, job: Int, state: State) throws {
        let writer = writers[job]
        let jpeg = frame.jpeg, frameIndex = frame.frameIndex, captureRow = frame.captureRow
        var comment: [UInt8] = []
        if plan.stamp { comment = JPEGComment.stamp(run: frame.runUUID, seq: seq) }
        try comment.withUnsafeBytes { commentBytes in
            // A stamped copy is SOI, its comment, then the rest of the JPEG, written as pieces.
            let pieces = plan.stamp
                ? [UnsafeRawBufferPointer(rebasing: jpeg[0..<2]), commentBytes, UnsafeRawBufferPointer(rebasing: jpeg[2...])]
                : frame.wholeJPEG
            let size = jpeg.count + commentBytes.count
            let hash = plan.stamp ? XXH128.hex(ofPieces: pieces) : frame.imageHash
            let savedAt = Date()
            let begin = monotonicMicroseconds()
            var end = 0
            var captureID = 0
            let saved: String
            do {
                // The frame's JPEG, the same bytes for every copy of this frame.
                saved = try writer.write(
                    pieces, to: path, lastPieceID: frameIndex, beforeNaming: { captureID = try captureRow.value() }
                ) { saved, synced in
                    end = monotonicMicroseconds()
                    recorder.record(
                        Catalog.NewSave(
                            captureID: captureID, seq: seq, path: saved, bytes: size, xxh128: hash,
                            savedAt: savedAt, durationMicroseconds: end - begin, synced: synced,
                            job: writers.count > 1 ? job + 1 : nil, directory: writer.directoryIdentity))
                }
            } catch let failure as AtomicFileWriter.NamedButNotSynced {
                // In place and recorded (not synced): counted, so that the summary and the rows
                // agree, and then the run ends.
                account(saved: failure.path, size: size, begin: begin, end: end, job: job, state: state)
                throw failure.error
            }
            if seq == 1 { Trace.mark("first file saved") }
            account(saved: saved, size: size, begin: begin, end: end, job: job, state: state)
        }
    }

    /// A file saved under its final name and recorded (nil: a photo sent to standard output), in
    /// the run's totals and progress. `end`: when it took its name (or was sent).
    private func account(saved: String?, size: Int, begin: Int, end: Int, job: Int, state: State) {
        // One job at a time: the totals, the rates and the progress line are shared.
        state.lock.withLock {
            state.latency.record(end - begin)
            state.progress.done += 1
            state.progress.bytes += size
            // From the end of the previous save to the end of this one: saving time, with
            // nothing of the capture or the pauses in it. This save's bookkeeping, after its
            // end, counts in the next one's.
            let now = end
            state.progress.savingMicroseconds += max(0, now - state.previousSaveEnd)
            state.previousSaveEnd = max(state.previousSaveEnd, now)
            // Jobs account out of order: the latest end so far.
            state.progress.elapsedMicroseconds = max(state.progress.elapsedMicroseconds, now - state.startedAt)
            if writers.count > 1 {
                state.progress.jobs[job].done += 1
                state.progress.jobs[job].bytes += size
            }
            state.lastPath = saved ?? state.lastPath
            if plan.fill, let saved, now - state.freeSpaceCheckedAt >= 100_000 {
                state.freeSpaceCheckedAt = now
                state.progress.freeBytes = freeBytes(for: saved) ?? state.progress.freeBytes
            }
            // The reporter is given the progress at most every 20 ms (and at the last save), not
            // at each of up to 100 000 saves a second.
            if now - state.reportedAt >= 20_000 || state.progress.done == state.progress.total {
                state.reportedAt = now
                reporter.update(state.progress)
            }
        }
    }

    /// `-o -`: the frame's JPEG to standard output, whole, or an error (the reader gone: EPIPE).
    private func send(_ jpeg: [UInt8], state: State) throws {
        let begin = monotonicMicroseconds()
        let failure = jpeg.withUnsafeBytes { writeFully(STDOUT_FILENO, $0) }
        if failure != 0 {
            throw CamrollError(.ioError, "cannot write to standard output: \(SystemError("write", errno: failure).reason)")
        }
        if state.progress.done == 0 { Trace.mark("first photo sent") }
        state.previousSaveEnd = begin
        account(saved: nil, size: jpeg.count, begin: begin, end: monotonicMicroseconds(), job: 0, state: state)
    }

    private static func userError(_ error: Error) -> CamrollError {
        (error as? CamrollError) ?? CamrollError(.failure, "\(error)")
    }

    /// Sleeps in short slices so that Ctrl-C during a long `--interval` is answered at once.
    private func waitOrCancel(microseconds: Int) {
        let deadline = monotonicMicroseconds() + microseconds
        while !cancellation.isCancelled {
            let left = deadline - monotonicMicroseconds()
            if left <= 0 { return }
            usleep(UInt32(min(left, 50_000)))
        }
    }
}

import FoundationEssentials
import Glibc

/// What a service run (`snap --every`) does around each frame of `BatchSaver`: waits for its
/// slot on the clock (`Schedule`), ends at `--for`/`--until`, and after each photo keeps the
/// disk in bounds (`Retention`), replaces `--latest`, runs the hook, tells systemd, and logs.
protocol FramePacing: AnyObject {
    /// Before a frame is taken: waits for its slot. False: the run is over (its end reached,
    /// or cancelled).
    func awaitFrame() -> Bool
    /// After the frame's copies were saved and handed to the catalog.
    func frameSaved(_ photo: SavedPhoto, recorder: SaveRecorder)
    /// The run's row is in: its id.
    func runStarted(_ runID: Int, recorder: SaveRecorder)
    /// The saving is over: the last hook waited for, the run's figures recorded.
    func finished(recorder: SaveRecorder)
}

struct SavedPhoto {
    var path: String
    var seq: Int
    var time: Date
    var bytes: Int
    /// From the slot's start to the photo saved.
    var microseconds: Int
}

final class ServicePacing: FramePacing, @unchecked Sendable {
    struct Settings {
        var periodMicroseconds: Int
        var aligned = true
        var forMicroseconds: Int?
        /// Wall clock, µs since the epoch.
        var untilMicroseconds: Int?
        var retention = RetentionPolicy()
        var template = ""
        var latest: String?
        var hook: [String]?
        var hookTimeoutMicroseconds = 60_000_000
    }

    private let settings: Settings
    private var schedule: Schedule
    private let cancellation: Cancellation
    private let log: ServiceLog
    private let notifier: ServiceNotifier
    private let retention: Retention?
    private var hook: Hook?
    private let startedMonotonic = monotonicMicroseconds()
    private var runID: Int?
    private var recorder: SaveRecorder?
    /// Events from before the run's row exists (a first capture that overran its slot: its skips
    /// come before the row is committed), recorded once it does. Guarded: a hook's thread
    /// records too.
    private let eventsBeforeTheRun = Locked<(runID: Int?, recorder: SaveRecorder?, events: [Catalog.Event])>((nil, nil, []))
    private(set) var skippedSlots = 0
    private var photos = 0
    private var slotStartedMonotonic = 0
    private var slot = 0
    /// Set by the camera while it is away, so that the slots it missed say why.
    var cameraWasAway = false

    init(settings: Settings, cancellation: Cancellation, log: ServiceLog, notifier: ServiceNotifier) {
        self.settings = settings
        self.schedule = Schedule(periodMicroseconds: settings.periodMicroseconds, aligned: settings.aligned, now: realtimeMicroseconds())
        self.cancellation = cancellation
        self.log = log
        self.notifier = notifier
        self.retention = settings.retention.isEmpty ? nil : Retention(policy: settings.retention, template: settings.template)
        if let command = settings.hook {
            let hookLog = log
            hook = Hook(command: command, timeoutMicroseconds: settings.hookTimeoutMicroseconds) { [weak self] problem, skipped in
                guard let problem else { return }
                hookLog.event("hook", problem, fields: ["skipped": skipped])
                self?.record(.init(.hook, count: skipped ? 1 : nil, detail: problem))
            }
        }
    }

    func runStarted(_ runID: Int, recorder: SaveRecorder) {
        self.runID = runID
        self.recorder = recorder
        let (period, total) = (settings.periodMicroseconds, skippedSlots)
        _ = recorder.begin { catalog in try catalog.recordSchedule(run: runID, everyMicroseconds: period, skippedSlots: total) }
        let waiting = eventsBeforeTheRun.withLock { state in
            state.runID = runID
            state.recorder = recorder
            defer { state.events = [] }
            return state.events
        }
        for event in waiting { _ = recorder.begin { catalog in try catalog.recordEvent(event, run: runID) } }
    }

    func record(_ event: Catalog.Event) {
        let target = eventsBeforeTheRun.withLock { state -> (Int, SaveRecorder)? in
            guard let runID = state.runID, let recorder = state.recorder else {
                state.events.append(event)
                return nil
            }
            return (runID, recorder)
        }
        guard let (runID, recorder) = target else { return }
        _ = recorder.begin { catalog in try catalog.recordEvent(event, run: runID) }
    }

    func awaitFrame() -> Bool {
        var previousLook: Int?
        var steppedBack = false
        while true {
            if cancellation.isCancelled { return false }
            let now = realtimeMicroseconds()
            if let limit = settings.forMicroseconds, case let over = monotonicMicroseconds() - startedMonotonic - limit, over >= 0 {
                countSlotsLeft(before: now - over)
                return false
            }
            if let until = settings.untilMicroseconds, now >= until {
                countSlotsLeft(before: until)
                return false
            }
            let step = schedule.step(now: now, steppedBack: &steppedBack)
            if steppedBack {
                steppedBack = false
                log.event("clock", "the clock went back: the schedule follows it")
                record(.init(.clock, detail: "stepped back"))
            }
            switch step {
            case .take(let slot, let skipped):
                slotStartedMonotonic = monotonicMicroseconds()
                self.slot = slot
                if skipped > 0 {
                    let why: String
                    if cameraWasAway {
                        why = "the camera was away"
                    } else if let previousLook, now - previousLook > max(settings.periodMicroseconds, 1_000_000) {
                        why = "the clock jumped forward (a suspend, or a clock step)"
                    } else {
                        why = "the previous photo overran its slot"
                    }
                    skippedSlots += skipped
                    log.event("skipped", "\(skipped) slot(s) skipped before slot \(slot): \(why)",
                              fields: ["count": skipped, "slot": slot, "skipped_total": skippedSlots])
                    record(.init(.skipped, slot: slot, count: skipped, detail: why))
                    if let runID, let recorder {
                        let (period, total) = (settings.periodMicroseconds, skippedSlots)
                        _ = recorder.begin { catalog in try catalog.recordSchedule(run: runID, everyMicroseconds: period, skippedSlots: total) }
                    }
                }
                cameraWasAway = false
                notifier.watchdog(status: status())
                return true
            case .wait(let until):
                previousLook = now
                var left = until - now
                if let limit = settings.forMicroseconds {
                    left = min(left, limit - (monotonicMicroseconds() - startedMonotonic))
                }
                if let end = settings.untilMicroseconds { left = min(left, end - now) }
                // Short naps: a signal is answered at once, and a clock step is seen within one.
                usleep(UInt32(max(1, min(left, 50_000))))
            }
        }
    }

    private var endCounted = false

    /// Whether `--for` or `--until` has come (read while the camera is away).
    func endReached() -> Bool {
        if let limit = settings.forMicroseconds, monotonicMicroseconds() - startedMonotonic >= limit { return true }
        if let until = settings.untilMicroseconds, realtimeMicroseconds() >= until { return true }
        return false
    }

    /// At the run's end (`--for`, `--until`): the slots due before it that the last photo's
    /// overrun (or the camera's absence) left untaken are skipped too, so that every slot of the
    /// run's span is a photo or a skip.
    private func countSlotsLeft(before end: Int) {
        guard !endCounted, let last = schedule.lastSlot else { return }
        endCounted = true
        let slotsBefore = Schedule.floorDiv(end - 1 - schedule.origin, settings.periodMicroseconds)
        let left = max(0, slotsBefore - last) + schedule.pendingSkips
        guard left > 0 else { return }
        skippedSlots += left
        let why = cameraWasAway ? "the camera was away" : "the previous photo overran its slot"
        log.event("skipped", "\(left) slot(s) skipped before the end: \(why)", fields: ["count": left, "skipped_total": skippedSlots])
        record(.init(.skipped, slot: slotsBefore + 1, count: left, detail: why + ", at the end"))
    }

    /// Watchdog pings while the camera is away (the loop is alive, only waiting).
    func stillWaiting() { notifier.watchdog(status: "waiting for the camera; " + status()) }

    private func status() -> String {
        "\(photos) photo(s), \(skippedSlots) slot(s) skipped"
    }

    func frameSaved(_ photo: SavedPhoto, recorder: SaveRecorder) {
        photos += 1
        let took = monotonicMicroseconds() - slotStartedMonotonic
        log.photo(photo, captureMicroseconds: took, skipped: skippedSlots)
        if let latest = settings.latest {
            if let problem = Self.replaceLatest(latest, with: photo.path) { log.event("latest", problem) }
        }
        if let retention, let runID {
            let template = settings.template
            do {
                try recorder.flush()
                let outcome = try recorder.begin { catalog -> Retention.Outcome in
                    let outcome = try retention.apply(catalog)
                    if outcome.deleted > 0 || !outcome.refused.isEmpty {
                        try catalog.recordEvent(
                            .init(.retention, count: outcome.deleted,
                                  detail: outcome.refused.isEmpty ? nil : "kept \(outcome.refused.count) that no longer match"),
                            run: runID)
                    }
                    return outcome
                }.value()
                if outcome.deleted > 0 {
                    log.event("retention", "deleted \(outcome.deleted) old photo(s) of \(template), \(Units.bytes(outcome.bytes))",
                              fields: ["count": outcome.deleted, "bytes": outcome.bytes])
                }
                if !outcome.refused.isEmpty {
                    log.event("retention", "kept \(outcome.refused.count) old photo(s) that no longer match what was saved: \(outcome.refused[0])")
                }
            } catch {
                log.event("retention", "could not delete old photos: \((error as? CamrollError)?.message ?? "\(error)")")
            }
        }
        hook?.run(path: photo.path, seq: photo.seq, time: photo.time)
        // The watchdog is pinged as each slot begins (awaitFrame); here only the status changes.
        if photos == 1 { notifier.ready(status: status()) } else { notifier.send("STATUS=" + status()) }
    }

    func finished(recorder: SaveRecorder) {
        // Ended while the camera was away: the slots since its last photo are skipped too.
        if !cancellation.isCancelled && endReached() {
            let now = realtimeMicroseconds()
            var end = settings.untilMicroseconds ?? Int.max
            if let limit = settings.forMicroseconds { end = min(end, now - (monotonicMicroseconds() - startedMonotonic - limit)) }
            countSlotsLeft(before: min(end, now))
        }
        hook?.waitForLast()
        notifier.stopping(status: status())
        if let runID {
            let (period, total) = (settings.periodMicroseconds, skippedSlots)
            _ = try? recorder.begin { catalog in try catalog.recordSchedule(run: runID, everyMicroseconds: period, skippedSlots: total) }.value()
        }
    }

    /// `--latest PATH`: a hard link to the newest photo (a copy where the two are on different
    /// file systems) put in place with one rename, so that a reader sees the old photo or the
    /// new one, never a part. nil, or what went wrong (logged, never fatal).
    static func replaceLatest(_ latest: String, with photo: String) -> String? {
        let temporary = PathText.directory(of: latest) + "/.\(PathText.lastComponent(of: latest)).camroll-\(getpid())"
        unlink(temporary)
        if link(photo, temporary) != 0 {
            guard errno == EXDEV || errno == EPERM || errno == EMLINK else {
                return "cannot update \(latest): \(SystemError("link").reason)"
            }
            guard let bytes = FileManager.default.contents(atPath: photo),
                  FileManager.default.createFile(atPath: temporary, contents: bytes) else {
                return "cannot update \(latest): cannot copy \(photo)"
            }
        }
        guard rename(temporary, latest) == 0 else {
            let reason = SystemError("rename").reason
            unlink(temporary)
            return "cannot update \(latest): \(reason)"
        }
        return nil
    }
}

/// A service run's log: one line per photo and one per event on stderr, for a journal (which
/// stamps each line itself, but a file does not: each line starts with its time); with --json
/// the same as NDJSON events on stdout; nothing with --quiet.
final class ServiceLog: @unchecked Sendable {
    enum Mode { case lines, json, none }
    private let console: Console
    private let mode: Mode
    private let lock = Lock()

    init(console: Console, mode: Mode) {
        self.console = console
        self.mode = mode
    }

    func photo(_ photo: SavedPhoto, captureMicroseconds: Int, skipped: Int) {
        switch mode {
        case .none: return
        case .json:
            emit(["event": "photo", "path": photo.path, "seq": photo.seq, "time": Timestamp.iso8601(photo.time),
                  "bytes": photo.bytes, "capture_ms": Double(captureMicroseconds) / 1000, "skipped_total": skipped])
        case .lines:
            line("\(Timestamp.iso8601(photo.time)) \(photo.path) \(photo.bytes) bytes, \(Format.fixed(Double(captureMicroseconds) / 1000, 1)) ms"
                + (skipped > 0 ? ", \(skipped) slot(s) skipped so far" : ""))
        }
    }

    func event(_ kind: String, _ message: String, fields: [String: Any] = [:]) {
        switch mode {
        case .none: return
        case .json: emit(fields.merging(["event": kind, "message": message, "time": Timestamp.iso8601(Date())]) { _, new in new })
        case .lines: line("\(Timestamp.iso8601(Date())) \(kind): \(message)")
        }
    }

    private func line(_ text: String) { lock.withLock { console.err(text + "\n") } }
    private func emit(_ object: [String: Any]) { lock.withLock { console.out(JSONLine.encode(object)) } }
}

import FoundationEssentials
import Glibc

/// How far a batch has got.
public struct SaveProgress: Sendable {
    public var done: Int
    public var total: Int
    /// `total` is only an upper bound: a service run with no count (`--every` without
    /// `--frames`), ended by its clock or a signal.
    public var openEnded = false
    public var bytes: Int
    /// Wall time since the run began: capture, encoding and `--interval` pauses included.
    public var elapsedMicroseconds: Int
    /// Time spent saving (writing, naming, recording), the denominator of the rates: it is
    /// storage that a stress test measures, not the camera or the pauses between frames.
    public var savingMicroseconds: Int = 0
    /// `--fill`: the space left on the file system, last time it was asked (nil otherwise).
    public var freeBytes: Int?
    /// `--fill` ended because the file system was full.
    public var filled = false
    /// `--fill` with its catalog on the file system it fills: the room kept for the catalog's
    /// rows, which the photos were not to take (nil otherwise).
    public var keptForCatalogBytes: Int?
    /// With `--jobs` > 1: what each job saved (empty with one).
    public var jobs: [Job] = []

    public struct Job: Sendable {
        public var done = 0
        public var bytes = 0
    }

    var elapsedSeconds: Double { Double(elapsedMicroseconds) / 1e6 }
    var savingSeconds: Double { Double(savingMicroseconds) / 1e6 }
    var savesPerSecond: Double { savingMicroseconds > 0 ? Double(done) / savingSeconds : 0 }
    var megabytesPerSecond: Double { savingMicroseconds > 0 ? Double(bytes) / 1e6 / savingSeconds : 0 }
    /// What job `index` saved a second of saving time (all jobs share that time).
    func megabytesPerSecond(ofJob index: Int) -> Double {
        savingMicroseconds > 0 ? Double(jobs[index].bytes) / 1e6 / savingSeconds : 0
    }

    /// `--fill`: seconds until the file system is full at the rate so far.
    var secondsToFull: Double {
        guard let freeBytes, bytes > 0, savingMicroseconds > 0 else { return .nan }
        return Double(freeBytes) / (Double(bytes) / savingSeconds)
    }
}

/// What a finished (or cancelled, or failed) batch reports.
public struct RunSummary: Sendable {
    public var runID: Int
    public var runUUID: String
    public var status: Catalog.RunStatus
    public var progress: SaveProgress
    public var latency: LatencyHistogram
    public var error: String?
    public var catalogPath: String
    public var lastPath: String?
    /// The size of the last photo saved (nil before the first).
    public var pictureSize: Resolution? = nil
}

/// Receives a batch's events and shows them: a live line, plain lines, NDJSON, or nothing.
public protocol ProgressReporter: AnyObject {
    func started(runID: Int, runUUID: String, device: String, total: Int, template: String)
    /// Called after a save, at most every 20 ms, and after the last of a run that saves all it
    /// was asked for (`BatchSaver.account`); a run that ends otherwise (a fill, a cancellation, a
    /// failure) ends with `finished` alone, whose summary has the final figures. Implementations
    /// decide how often to show it.
    func update(_ progress: SaveProgress)
    func finished(_ summary: RunSummary)
}

enum Units {
    static func bytes(_ count: Int) -> String {
        let value = Double(count)
        if value >= 1e9 { return Format.fixed(value / 1e9, 2) + " GB" }
        if value >= 1e6 { return Format.fixed(value / 1e6, 1) + " MB" }
        if value >= 1e3 { return Format.fixed(value / 1e3, 1) + " kB" }
        return "\(count) B"
    }

    static func duration(microseconds: Int) -> String {
        let value = Double(microseconds)
        if value >= 1e6 { return Format.fixed(value / 1e6, 2) + " s" }
        if value >= 1e3 { return Format.fixed(value / 1e3, 2) + " ms" }
        return "\(microseconds) µs"
    }

    /// `mm:ss` or `h:mm:ss`; "--:--" when there is no telling, or past 100 000 hours (a fill
    /// of a file system that says its space is unlimited: an Int would not hold the seconds).
    static func clock(seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0, seconds < 360_000_000 else { return "--:--" }
        let whole = Int(seconds.rounded())
        if whole >= 3600 { return "\(whole / 3600):\(Format.integer(whole / 60 % 60, width: 2, pad: "0")):\(Format.integer(whole % 60, width: 2, pad: "0"))" }
        return "\(Format.integer(whole / 60, width: 2, pad: "0")):\(Format.integer(whole % 60, width: 2, pad: "0"))"
    }
}

/// The human-readable summary, shared by the terminal and plain reporters. `detailed`: the
/// figures of a storage test (counts, rates, latencies, the catalog's run), for more than one
/// save or `--stats`; otherwise one photo is one line, its path, size and bytes.
func summaryText(_ summary: RunSummary, detailed: Bool = true) -> String {
    let p = summary.progress
    if !detailed && p.freeBytes == nil {
        if summary.status == .completed, p.done == 1, let path = summary.lastPath {
            let kind = path.lowercased().hasSuffix(".png") ? "PNG" : "JPEG"
            let size = summary.pictureSize.map { "\($0) \(kind), " } ?? "\(kind), "
            return "saved \(path) (\(size)\(Units.bytes(p.bytes)))\n"
        }
        if summary.status != .completed && summary.status != .running && p.done == 0 {
            return "\(summary.status == .cancelled ? "cancelled" : "failed"): nothing saved\n"
        }
    }
    let head: String
    // A fill's total is only an upper bound (a billion without -n): its count stands alone.
    let count = p.freeBytes != nil || p.openEnded ? "\(p.done)" : "\(p.done)/\(p.total)"
    switch summary.status {
    case .completed where p.filled: head = "filled \(count)"
    case .completed, .running: head = "saved \(count)"
    case .cancelled: head = "cancelled after \(count)"
    case .failed: head = "failed after \(count)"
    }
    var lines = [
        "\(head) files, \(Units.bytes(p.bytes)) in \(Units.duration(microseconds: p.elapsedMicroseconds))"
            + " (\(Units.duration(microseconds: p.savingMicroseconds)) saving): "
            + "\(Format.fixed(p.savesPerSecond, 1)) saves/s, \(Format.fixed(p.megabytesPerSecond, 1)) MB/s"
    ]
    let l = summary.latency
    if l.count > 0 {
        lines.append(
            "save latency p50 \(Units.duration(microseconds: l.percentile(0.5)))  "
                + "p95 \(Units.duration(microseconds: l.percentile(0.95)))  "
                + "p99 \(Units.duration(microseconds: l.percentile(0.99)))  "
                + "max \(Units.duration(microseconds: l.maximum))")
    }
    if !p.jobs.isEmpty {
        lines.append("\(p.jobs.count) jobs: " + p.jobs.indices.map { index in
            "\(index + 1): \(Format.fixed(p.megabytesPerSecond(ofJob: index), 1)) MB/s (\(p.jobs[index].done))"
        }.joined(separator: ", "))
    }
    if p.filled, let free = p.freeBytes {
        let kept = p.keptForCatalogBytes.map { ", and \(Units.bytes($0)) kept for the catalog on it" } ?? ""
        lines.append("the file system is full: \(Units.bytes(free)) left\(kept); check it with 'camroll verify --run \(summary.runID)'")
    }
    if let last = summary.lastPath { lines.append("last file: \(last.printable)") }
    lines.append("run \(summary.runID) in \(summary.catalogPath.printable)")
    return lines.joined(separator: "\n") + "\n"
}

/// One status line on stderr, shown as the output allows: redrawn in place on a terminal (at most
/// ten times a second), else a plain line at most once a second. The text is only built when it
/// will be shown: `update` runs up to 50 times a second.
final class ProgressLine {
    private let console: Console
    let live: Bool
    private var lastShown: Int
    private var shown = false

    init(console: Console, live: Bool) {
        self.console = console
        self.live = live
        // A plain line first appears after a second: short runs print only their summary.
        self.lastShown = live ? 0 : monotonicMicroseconds()
    }

    func show(force: Bool = false, _ text: () -> String) {
        let now = monotonicMicroseconds()
        guard force || now - lastShown >= (live ? 100_000 : 1_000_000) else { return }
        lastShown = now
        shown = true
        if live { console.err(control: "\r\u{1B}[2K", fitted(text())) } else { console.err(text() + "\n") }
    }

    /// A live line longer than the terminal is wide would wrap, and every redraw would then
    /// leave a line behind: it is cut to one column less than the width.
    private func fitted(_ text: String) -> String {
        guard let columns = console.stderrColumns, text.count >= columns else { return text }
        return String(text.prefix(max(1, columns - 1)))
    }

    /// Removes a live line before the summary is printed.
    func clear() {
        if live && shown { console.err(control: "\r\u{1B}[2K", "") }
    }
}

/// On a terminal: k/N, %, saves/s, MB/s and ETA in a live line, then the summary.
public final class TerminalProgress: ProgressReporter {
    private let console: Console
    private let line: ProgressLine
    private let detailed: Bool

    /// `detailed`: the storage test's figures in the summary (`summaryText`).
    public init(console: Console, detailed: Bool = true) {
        self.console = console
        self.line = ProgressLine(console: console, live: true)
        self.detailed = detailed
    }

    public func started(runID: Int, runUUID: String, device: String, total: Int, template: String) {}

    public func update(_ progress: SaveProgress) {
        if let free = progress.freeBytes {
            // A fill has no count to reach: the space left is its progress.
            line.show {
                "filling: \(progress.done) saved  \(Units.bytes(progress.bytes))  \(Format.fixed(progress.megabytesPerSecond, 1)) MB/s  "
                    + "\(Units.bytes(free)) free  full in " + Units.clock(seconds: progress.secondsToFull)
            }
            return
        }
        line.show(force: progress.done == progress.total) {
            let fraction = progress.total > 0 ? Double(progress.done) / Double(progress.total) : 1
            let remaining = progress.savesPerSecond > 0
                ? Double(progress.total - progress.done) / progress.savesPerSecond : .nan
            let percent = Format.fixed(fraction * 100, 1)
            return "saving \(progress.done)/\(progress.total)  "
                + String(repeating: " ", count: max(0, 5 - percent.count)) + percent + "%  "
                + "\(Format.fixed(progress.savesPerSecond, 0)) saves/s  \(Format.fixed(progress.megabytesPerSecond, 1)) MB/s  ETA "
                + Units.clock(seconds: remaining)
        }
    }

    public func finished(_ summary: RunSummary) {
        line.clear()
        console.out(summaryText(summary, detailed: detailed))
    }
}

/// For logs and pipes: a plain line at most once a second, then the summary.
public final class PlainProgress: ProgressReporter {
    private let console: Console
    private let line: ProgressLine?
    private let detailed: Bool

    /// `detailed`: the storage test's figures in the summary (`summaryText`).
    public init(console: Console, showProgress: Bool, detailed: Bool = true) {
        self.console = console
        self.line = showProgress ? ProgressLine(console: console, live: false) : nil
        self.detailed = detailed
    }

    public func started(runID: Int, runUUID: String, device: String, total: Int, template: String) {}

    public func update(_ progress: SaveProgress) {
        line?.show {
            if let free = progress.freeBytes {
                return "filling: \(progress.done) saved, \(Units.bytes(progress.bytes)) (\(Format.fixed(progress.megabytesPerSecond, 1)) MB/s), "
                    + "\(Units.bytes(free)) free, full in " + Units.clock(seconds: progress.secondsToFull)
            }
            return "saving \(progress.done)/\(progress.total) (\(Format.fixed(progress.savesPerSecond, 1)) saves/s, "
                + "\(Format.fixed(progress.megabytesPerSecond, 1)) MB/s)"
        }
    }

    public func finished(_ summary: RunSummary) { console.out(summaryText(summary, detailed: detailed)) }
}

/// `-o -`: standard output carries the photos, so everything else goes to stderr — a live line
/// there on a terminal (a plain one at most once a second otherwise), one line at the end.
public final class StandardOutputProgress: ProgressReporter {
    private let console: Console
    private let line: ProgressLine?

    public init(console: Console, showProgress: Bool) {
        self.console = console
        self.line = showProgress ? ProgressLine(console: console, live: console.stderrIsTerminal) : nil
    }

    public func started(runID: Int, runUUID: String, device: String, total: Int, template: String) {}

    public func update(_ progress: SaveProgress) {
        guard let line else { return }
        line.show(force: line.live && progress.done == progress.total) {
            "sent \(progress.done)/\(progress.total) photos to standard output, \(Units.bytes(progress.bytes))"
        }
    }

    public func finished(_ summary: RunSummary) {
        line?.clear()
        let p = summary.progress
        let photos = p.done == 1 ? "1 photo" : "\(p.done) photos"
        let head = switch summary.status {
        case .completed, .running: "sent \(photos)"
        case .cancelled: "cancelled after \(photos) of \(p.total)"
        case .failed: "failed after \(photos) of \(p.total)"
        }
        console.err("\(head), \(Units.bytes(p.bytes)), to standard output; run \(summary.runID) in \(summary.catalogPath.printable)\n")
    }
}

/// `--quiet`: errors only.
public final class QuietProgress: ProgressReporter {
    public init() {}
    public func started(runID: Int, runUUID: String, device: String, total: Int, template: String) {}
    public func update(_ progress: SaveProgress) {}
    public func finished(_ summary: RunSummary) {}
}

/// `--json`: one JSON object per line on stdout: `start`, `progress` (at most once a second),
/// `summary`.
public final class JSONProgress: ProgressReporter {
    private let console: Console
    private var lastEvent = monotonicMicroseconds()
    /// What the source adds to the start event (a camera's warm-up).
    private let sourceFields: [String: Any]

    public init(console: Console, sourceFields: [String: Any] = [:]) {
        self.console = console
        self.sourceFields = sourceFields
    }

    public func started(runID: Int, runUUID: String, device: String, total: Int, template: String) {
        emit(sourceFields.merging([
            "event": "start", "run_id": runID, "run_uuid": runUUID, "device": device,
            "requested": total, "template": template,
        ]) { _, fixed in fixed })
    }

    public func update(_ progress: SaveProgress) {
        let now = monotonicMicroseconds()
        guard now - lastEvent >= 1_000_000 else { return }
        lastEvent = now
        var event: [String: Any] = [
            "event": "progress", "done": progress.done, "total": progress.total, "bytes": progress.bytes,
            "elapsed_s": progress.elapsedSeconds,
        ]
        if let free = progress.freeBytes { event["free_bytes"] = free }
        emit(event)
    }

    public func finished(_ summary: RunSummary) {
        let p = summary.progress
        let l = summary.latency
        var event: [String: Any] = [
            "event": "summary", "run_id": summary.runID, "run_uuid": summary.runUUID,
            "status": summary.status.rawValue, "saves": p.done, "requested": p.total, "bytes": p.bytes,
            "elapsed_s": p.elapsedSeconds, "saving_s": p.savingSeconds, "saves_per_s": p.savesPerSecond, "mb_per_s": p.megabytesPerSecond,
            "latency_us": [
                "p50": l.percentile(0.5), "p95": l.percentile(0.95), "p99": l.percentile(0.99),
                "max": l.maximum,
            ],
            "catalog": summary.catalogPath,
        ]
        if let error = summary.error { event["error"] = error }
        if p.filled { event["filled"] = true }
        if !p.jobs.isEmpty {
            event["jobs"] = p.jobs.indices.map { index in
                ["job": index + 1, "saves": p.jobs[index].done, "bytes": p.jobs[index].bytes,
                 "mb_per_s": p.megabytesPerSecond(ofJob: index)] as [String: Any]
            }
        }
        if let free = p.freeBytes { event["free_bytes"] = free }
        if let kept = p.keptForCatalogBytes { event["kept_for_catalog_bytes"] = kept }
        if let last = summary.lastPath { event["last_path"] = last }
        emit(event)
    }

    private func emit(_ object: [String: Any]) {
        console.outRaw(JSONLine.encode(object))
    }
}

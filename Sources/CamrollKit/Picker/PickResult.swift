import Glibc

/// What pick hands its caller, and how its saves are shown meanwhile. Standard output gets the
/// result alone: the saved paths, one a line in the order saved, or one JSON object with
/// `--json`. The saves' progress goes to the window (whose Cancel stops them as Ctrl-C does)
/// or, from a terminal, to a line on stderr; the summary to stderr.
final class PickResult: ProgressReporter {
    private let console: Console
    private let window: PickerWindow?
    private let cancellation: Cancellation
    private let options: SnapOptions
    private let line: ProgressLine?
    /// GTK is driven from the thread that made the window only.
    private let windowThread = pthread_self()
    private(set) var summary: RunSummary?

    init(console: Console, window: PickerWindow?, cancellation: Cancellation, options: SnapOptions) {
        self.console = console
        self.window = window
        self.cancellation = cancellation
        self.options = options
        let showsLine = window == nil && options.count > 1 && console.stderrIsTerminal && !options.global.quiet
            && !options.global.noProgress && !options.global.json
        line = showsLine ? ProgressLine(console: console, live: true) : nil
    }

    func started(runID: Int, runUUID: String, device: String, total: Int, template: String) {}

    func update(_ progress: SaveProgress) {
        let text = "saving \(progress.done)/\(progress.total)"
        if let window, pthread_equal(pthread_self(), windowThread) != 0 {
            window.showProgress(done: progress.done, total: progress.total, text: text)
            if window.cancelPressed() { cancellation.cancel(signal: SIGINT) }
        }
        line?.show(force: progress.done == progress.total) { text }
    }

    func finished(_ summary: RunSummary) {
        self.summary = summary
        line?.clear()
        guard !options.global.quiet, !options.global.json else { return }
        let p = summary.progress
        let photos = p.done == 1 ? "1 photo" : "\(p.done) photos"
        let head = switch summary.status {
        case .completed, .running: options.toStandardOutput ? "sent \(photos) to standard output" : "saved \(photos)"
        case .cancelled: "cancelled after \(photos) of \(p.total)"
        case .failed: "failed after \(photos) of \(p.total)"
        }
        console.err("\(head), \(Units.bytes(p.bytes)); run \(summary.runID) in \(summary.catalogPath)\n")
    }

    /// The result on stdout, from the catalog's rows of the run: what was saved is what is said.
    func print(from catalog: Catalog, device: String, since started: Int) throws {
        guard let summary else { return }
        let files = try catalog.savedFiles(ofRun: summary.runID)
        guard options.global.json else {
            // Exactly, for the program that reads them; escaped only for a person's terminal.
            let paths = files.map { $0.path + "\n" }.joined()
            if console.stdoutIsTerminal { console.out(paths) } else { console.outRaw(paths) }
            return
        }
        let first = files.first
        var object: [String: Any] = [
            "path": first?.path ?? "", "paths": files.map(\.path),
            "width": first?.width ?? 0, "height": first?.height ?? 0, "bytes": first?.bytes ?? 0,
            "format": "jpeg", "xxh128": first?.xxh128 ?? "",
            "run_id": summary.runID, "capture_id": first?.captureID ?? 0, "device": device,
            "seconds": Double(monotonicMicroseconds() - started) / 1e6, "catalog": summary.catalogPath,
        ]
        if files.count > 1 { object["saves"] = files.count }
        console.outRaw(JSONLine.encode(object))
    }
}

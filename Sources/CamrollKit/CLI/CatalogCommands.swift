import FoundationEssentials
import Glibc

/// `camroll list | show | verify | delete | stats`: the catalog as a tool of its own.
struct CatalogCommands {
    let command: String
    var global = GlobalOptions()
    var database: String?
    var runID: Int?
    var captureID: Int?
    var saveID: Int?
    var paths: [String] = []
    var repair = false
    /// `verify --jobs`: files read at once.
    var jobs = 1
    /// `stats --plot`: where to write the run's charts, and as what (by the name's extension).
    var plot: (path: String, kind: RunPlot.FileKind)?
    var force = false
    /// `delete --dry-run`: what would go, and nothing deleted.
    var dryRun = false
    var csv = false
    var limit: Int?
    /// `list --all`, `--utc`, `--bytes`.
    var all = false
    var utc = false
    var rawBytes = false
    /// `show --full`: the saved file drawn, not the thumbnail.
    var full = false
    var previewMode: PreviewMode?
    let console: Console
    /// `show last`, `show --capture last`: the newest, resolved once the catalog is open.
    static let last = -1
    let environment: [String: String]

    init(command: String, arguments: [String], environment: [String: String]) throws {
        self.command = command
        self.environment = environment
        var scanner = ArgumentScanner(arguments, command: command)
        var global = GlobalOptions()
        var positionals: [String] = []
        let spec = CommandTable.command(command) ?? CommandTable.list
        while let parsed = try scanner.next(in: spec) {
            switch parsed {
            case .positional(let word): positionals.append(word)
            case .option(let option, let given, let typed):
                if try global.apply(option, value: given, scanner) { continue }
                let value = given ?? ""
                func id() throws -> Int {
                    try ValueParser.integer(value, option: typed, range: 1...Int.max)
                }
                switch option.id {
                case "--help": throw HelpRequest(command: command)
                case "--db": database = try ValueParser.path(value, option: typed)
                case "--run": runID = value == "last" ? Self.last : try id()
                case "--capture":
                    captureID = value == "last" && command == "show" ? Self.last : try id()
                case "--save": saveID = try id()
                case "--limit": limit = try ValueParser.integer(value, option: typed, range: 1...Int.max)
                case "--repair": repair = true
                case "--jobs": jobs = try ValueParser.integer(value, option: typed, range: 1...64)
                case "--plot":
                    guard let kind = RunPlot.FileKind(path: value) else {
                        throw scanner.usageError("'--plot' writes SVG or PNG: give a name ending in .svg or .png")
                    }
                    plot = (value, kind)
                case "--force": force = true
                case "--dry-run": dryRun = true
                case "--csv": csv = true
                case "--all": all = true
                case "--utc": utc = true
                case "--bytes": rawBytes = true
                case "--full": full = true
                case "--preview-mode": previewMode = try ValueParser.previewMode(value, scanner)
                default: throw CommandTable.unhandled(option, in: command)
                }
            }
        }
        switch command {
        case "verify":
            // An empty one would be the working directory.
            if positionals.contains("") { throw scanner.usageError("one of the paths is empty") }
            paths = positionals
            if runID != nil && !paths.isEmpty { throw scanner.usageError("give --run or paths, not both") }
        case "show":
            guard positionals.count <= 1 else { throw scanner.usageError("'show' takes one run ID") }
            if let word = positionals.first {
                if word == "last" {
                    runID = Self.last
                } else {
                    guard let id = Int(word), id > 0 else { throw scanner.usageError("invalid run ID '\(word)'") }
                    runID = id
                }
            }
            guard (runID != nil) != (captureID != nil) else {
                throw scanner.usageError("say which: 'camroll show RUN_ID' or 'camroll show --capture ID'")
            }
        case "delete":
            guard positionals.isEmpty else { throw scanner.usageError("unexpected argument '\(positionals[0])'") }
            let chosen = [runID, captureID, saveID].compactMap({ $0 }).count
            guard chosen <= 1 else { throw scanner.usageError("give only one of --save, --capture and --run") }
            guard chosen == 1 else {
                throw scanner.usageError("say what to delete: --save ID, --capture ID or --run ID")
            }
        default:
            guard positionals.isEmpty else { throw scanner.usageError("unexpected argument '\(positionals[0])'") }
        }
        if csv && global.json { throw scanner.usageError("'--csv' and '--json' cannot be used together") }
        if all && limit != nil { throw scanner.usageError("'--all' and '--limit' cannot be used together") }
        if all && runID != nil { throw scanner.usageError("'--all' and '--run' cannot be used together") }
        try global.validate(scanner)
        self.global = global
        self.console = Console(colorMode: global.color, environment: environment)
    }

    func run() throws -> ExitCode {
        let named = try database.map { try UserDirectories.expandingTilde($0, environment: environment) } ?? Catalog.defaultPath(environment: environment)
        // The catalog must be there: not finding it is 66, as "no catalog at" is.
        let path = try AbsolutePath.resolve(named, code: .noInput)
        guard FileManager.default.fileExists(atPath: path) else {
            throw CamrollError(.noInput, "no catalog at \(path)", hint: "Take photos with 'camroll snap' first, or name one with --db PATH.")
        }
        try Catalog.refuseNonFile(path, as: .noInput)
        // Reading commands change nothing, so they work on a catalog they cannot write.
        let writes = (command == "delete" && !dryRun) || (command == "verify" && repair)
        let catalog = try Catalog(path: path, readOnly: !writes, mayCreate: false)
        defer { catalog.checkpoint() }
        // Every page these commands read is checked as it is read (SQLite's cell size check: a
        // damaged page is SQLITE_CORRUPT, exit 65, never rows made of its garbage), so that a
        // command on one run needs no check of the whole catalog to be sure of what it shows.
        try catalog.userErrors { try catalog.database.execute("PRAGMA cell_size_check=ON") }
        var resolved = self
        if runID == Self.last {
            resolved.runID = try catalog.userErrors { try catalog.database.prepare("SELECT max(id) FROM runs").stepInt() }
            guard resolved.runID != nil else { throw CamrollError(.noInput, "no runs in \(catalog.path)") }
        }
        if captureID == Self.last {
            resolved.captureID = try catalog.userErrors { try catalog.database.prepare("SELECT max(id) FROM captures").stepInt() }
            guard resolved.captureID != nil else { throw CamrollError(.noInput, "no captures in \(catalog.path)") }
        }
        return try resolved.dispatch(catalog)
    }

    private func dispatch(_ catalog: Catalog) throws -> ExitCode {
        if let runID, try catalog.userErrors({ try catalog.database.prepare("SELECT 1 FROM runs WHERE id = ?").bind(.int(runID)).stepInt() }) == nil {
            throw CamrollError(.noInput, "no run \(runID) in \(catalog.path)", hint: "'camroll list' shows the runs.")
        }
        switch command {
        case "list": return try catalog.userErrors { try list(catalog) }
        case "show": return try catalog.userErrors { try show(catalog) }
        case "verify": return try verify(catalog)
        case "delete": return try catalog.userErrors { try delete(catalog) }
        default: return try catalog.userErrors { try stats(catalog) }
        }
    }

    // MARK: list

    private var limitClause: String { limit.map { " LIMIT \($0)" } ?? "" }

    /// `list`: for a person, the newest runs that fit the screen, local times, sizes in kB and
    /// MB, the lines cut to its width; for a program (--json, --csv), every run as the catalog
    /// has it. The runs' `saved` and `bytes` are the files there now (`status = 'saved'`); their
    /// MB/s is what the run did (`RunFigures`), which outlives its files.
    private func list(_ catalog: Catalog) throws -> ExitCode {
        let format: Table.Format = global.json ? .json : csv ? .csv : .text
        let screen = console.stdoutScreen(environment: environment)
        let time = { (value: Table.Value, seconds: Bool) -> Table.Value in
            if utc { return value }
            guard case .text(let text) = value else { return value }
            return .text(Timestamp.local(text, seconds: seconds))
        }
        let size = { (value: Table.Value) -> Table.Value in
            if rawBytes { return value }
            guard case .int(let bytes) = value else { return value }
            return .text(Units.bytes(bytes))
        }
        if let run = runID {
            let sql = """
                SELECT s.id, s.seq, s.path, s.bytes, s.xxh128, s.saved_at, s.duration_us, s.synced, s.status
                FROM saves s JOIN captures c ON c.id = s.capture_id WHERE c.run_id = \(run)
                """
            // In the order saved, frame by frame: the order of the indexes it is read through, so
            // the first row comes at once, however many saves the run made.
            try Table.stream(catalog.database, sql + " ORDER BY c.id, s.id\(limitClause)", as: format, shown: { row in
                var row = row
                row[3] = size(row[3])
                row[5] = time(row[5], true)
                return row
            }, lastRow: limit == nil ? sql + " ORDER BY c.id DESC, s.id DESC LIMIT 1" : nil) { text in
                if format == .json { console.outRaw(text) } else { console.out(text) }
                return !Console.stdoutHasFailed
            }
            return .success
        }
        // The header, the note of the runs left out, and the shell's prompt after them.
        let screenful = max(1, screen.rows - 3)
        let rows = limit ?? (format == .text && !all ? screenful : nil)
        let figures = RunFigures.sql(kept: try catalog.keepsRunTotals())
        let sql = """
            SELECT r.id, r.started_at, r.status, r.device,
                   count(CASE WHEN s.status = 'saved' THEN 1 END) AS saved, r.requested_count AS requested,
                   coalesce(sum(CASE WHEN s.status = 'saved' THEN \(Catalog.plausibleBytes) END), 0) AS bytes,
                   \(RunFigures.megabytesPerSecondSQL(bytes: figures.bytes, savingMicroseconds: figures.savingMicroseconds)) AS mb_per_s,
                   (SELECT path FROM saves WHERE capture_id = (SELECT min(id) FROM captures WHERE run_id = r.id)
                    ORDER BY id LIMIT 1) AS path
            FROM runs r
            LEFT JOIN captures c ON c.run_id = r.id
            LEFT JOIN saves s ON s.capture_id = c.id
            GROUP BY r.id ORDER BY r.id DESC\(rows.map { " LIMIT \($0)" } ?? "")
            """
        try Table.stream(
            catalog.database, sql, as: format,
            // 80 columns leave the first file's path ~15 of them: the time to the minute, the
            // files saved and asked for in one column.
            headers: ["id", utc ? "started (UTC)" : "started", "status", "device", "files", rawBytes ? "bytes" : "size",
                      "MB/s", "first file"],
            shown: { row in
                var rate = row[7]
                if case .double(let value) = rate { rate = .text(Format.fixed(value, 1)) }
                return [row[0], time(row[1], false), row[2], row[3], .text(row[4].display + "/" + row[5].display), size(row[6]),
                        rate, row[8]]
            }, width: screen.columns
        ) { text in
            if format == .json { console.outRaw(text) } else { console.out(text) }
            return !Console.stdoutHasFailed
        }
        if format == .text, limit == nil, let rows, let total = try catalog.database.scalarInt("SELECT count(*) FROM runs"), total > rows {
            console.out("(\(total - rows) older run\(total - rows == 1 ? "" : "s") not shown: --all lists every run)\n")
        }
        return .success
    }

    // MARK: show

    private func show(_ catalog: Catalog) throws -> ExitCode {
        let runID: Int
        if let capture = captureID {
            guard let owner = try catalog.database.prepare("SELECT run_id FROM captures WHERE id = ?").bind(.int(capture)).stepInt() else {
                throw CamrollError(.noInput, "no capture \(capture) in \(catalog.path)")
            }
            runID = owner
        } else {
            runID = self.runID ?? 0
        }
        let runTable = try Table.query(catalog.database, "SELECT * FROM runs WHERE id = \(runID)")
        guard !runTable.rows.isEmpty else { throw CamrollError(.noInput, "no run \(runID) in \(catalog.path)") }
        let captureFilter = captureID.map { "id = \($0)" } ?? "run_id = \(runID)"
        let captures = try Table.query(catalog.database, """
            SELECT id, uuid, captured_at, frame_sequence, pixel_format, width || 'x' || height AS size, jpeg_quality,
                   jpeg_bytes, xxh128, \(try catalog.keepsThumbnailsApart() ? "(SELECT length(jpeg) FROM thumbnails WHERE capture_id = captures.id)" : "length(thumbnail)") AS thumbnail_bytes, \(try catalog.recordsBanners() ? "banner" : "NULL AS banner"),
                   (SELECT count(*) FROM saves WHERE capture_id = captures.id AND status = 'saved') AS saved
            FROM captures WHERE \(captureFilter) ORDER BY id
            """)
        let statuses = try Table.query(catalog.database, """
            SELECT s.status, count(*) AS files, sum(\(Catalog.plausibleBytes)) AS bytes FROM saves s JOIN captures c ON c.id = s.capture_id
            WHERE c.\(captureFilter) GROUP BY s.status
            """)
        if global.json {
            console.outRaw(JSONLine.encode([
                "run": runTable.objects().first ?? [:], "captures": captures.objects(), "saves": statuses.objects(),
            ] as [String: Any]))
            return .success
        }
        console.out(showText(runID: runID, run: runTable, captures: captures, statuses: statuses))
        do {
            if let picture = try picture(catalog, filter: captureFilter) { console.outRaw("\n" + picture) }
        } catch let error as CamrollError {
            // The rows are what was asked for; a picture that cannot be drawn is a warning. Its
            // hint only where it names what show can do: `--max-pixels` is snap's.
            let hint = error.hint?.contains("--max-pixels") == true
                ? "show draws pictures of at most \(JPEGDecoder.pixelCount(JPEGDecoder.maxPixels)); open the file in an image viewer"
                : error.hint
            console.warning(error.message + (hint.map { " (\($0))" } ?? ""))
        }
        return .success
    }

    /// Captures shown as text at most; `--json` gives them all.
    static let shownCaptures = 10

    /// `show`'s rows for a person, each line within the screen's width: the run's row (a long
    /// command cut at its end, the template at its start), its captures with local times and
    /// sizes in kB (their UUIDs and digests are in --json), the saves by status.
    private func showText(runID: Int, run: Table, captures: Table, statuses: Table) -> String {
        let width = console.stdoutScreen(environment: environment).columns
        func fitted(_ line: String, fromTheLeft: Bool = false) -> String {
            guard line.count > width else { return line }
            if !fromTheLeft { return String(line.prefix(max(1, width - 1))) + "…" }
            let head = line.prefix { $0 != ":" }.count + 1
            let value = line.dropFirst(head).drop { $0 == " " }
            let label = String(line.prefix(line.count - value.count))
            return label + "…" + String(value.suffix(max(1, width - label.count - 1)))
        }
        var text = "run \(runID)\n"
        for line in run.vertical().split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            text += fitted(String(line), fromTheLeft: line.hasPrefix("  output_template:")) + "\n"
        }
        let column = { (name: String) in captures.columns.firstIndex(of: name) }
        var shown = Table(columns: ["id", "captured", "frame", "format", "size", "quality", "bytes", "saved"], rows: [])
        for row in captures.rows.prefix(Self.shownCaptures) {
            func value(_ name: String) -> Table.Value { column(name).map { row[$0] } ?? .null }
            var captured = value("captured_at")
            if case .text(let at) = captured { captured = .text(Timestamp.local(at)) }
            var bytes = value("jpeg_bytes")
            if case .int(let count) = bytes { bytes = .text(Units.bytes(count)) }
            shown.rows.append([value("id"), captured, value("frame_sequence"), value("pixel_format"), value("size"),
                               value("jpeg_quality"), bytes, value("saved")])
        }
        text += "\ncaptures\n" + shown.text().split(separator: "\n").map { fitted(String($0)) + "\n" }.joined()
        // Each banner's text on a line of its own (a table cell would be cut to the screen),
        // its lines joined; escaped like every catalog value.
        for row in captures.rows.prefix(Self.shownCaptures) {
            guard let index = column("banner"), case .text(let banner) = row[index], let id = column("id").map({ row[$0] }) else { continue }
            let idText = { if case .int(let number) = id { String(number) } else { "?" } }()
            text += fitted("banner of \(idText): " + banner.split(separator: "\n").joined(separator: " · ").printable) + "\n"
        }
        if captures.rows.count > Self.shownCaptures {
            text += "(\(captures.rows.count - Self.shownCaptures) more: 'camroll show \(runID) --json' lists them all)\n"
        }
        var byStatus = statuses
        byStatus.rows = byStatus.rows.map { row in
            row.enumerated().map { index, value in
                guard statuses.columns[index] == "bytes", case .int(let count) = value else { return value }
                return .text(Units.bytes(count))
            }
        }
        return text + "\nsaves by status\n" + byStatus.text()
    }

    /// The capture's thumbnail (or with --full its saved file) drawn to fit the screen, as wide
    /// as it is and no taller (a line kept for the prompt), when stdout is a terminal (or a mode
    /// or --color always asks for it anyway).
    private func picture(_ catalog: Catalog, filter: String) throws -> String? {
        if previewMode == PreviewMode.none { return nil }
        let forced = previewMode != nil || console.colorMode == .always
        guard console.stdoutIsTerminal || forced else { return nil }
        let source: ImageFile
        if full {
            let statement = try catalog.database.prepare("""
                SELECT s.path FROM saves s JOIN captures c ON c.id = s.capture_id
                WHERE c.\(filter) AND s.status = 'saved' ORDER BY s.id LIMIT 1
                """)
            guard try statement.step(), let path = statement.text(0) else { return nil }
            source = try ImageFile(path: path)
        } else {
            guard let thumbnail = try firstThumbnail(catalog, filter: filter) else { return nil }
            source = try ImageFile(bytes: thumbnail, name: "thumbnail", subject: "the capture's thumbnail")
        }
        let frame = try source.nextFrame()
        let painter = try TerminalPainter(
            requested: previewMode, environment: environment, color: console.useColorOnStdout)
        let screen = console.stdoutScreen(environment: environment)
        let text = try painter.draw(frame, fitting: screen.columns, rows: max(1, screen.rows - 1), cell: TerminalSize.of(STDOUT_FILENO)?.cell)
        return String(decoding: text, as: UTF8.self) + "\n"
    }

    private func firstThumbnail(_ catalog: Catalog, filter: String) throws -> [UInt8]? {
        // A catalog of an older camroll, only read since, has them in the captures' rows.
        let statement = try catalog.database.prepare(try catalog.keepsThumbnailsApart()
            ? "SELECT t.jpeg FROM captures c JOIN thumbnails t ON t.capture_id = c.id WHERE c.\(filter) ORDER BY c.id LIMIT 1"
            : "SELECT thumbnail FROM captures c WHERE c.\(filter) AND thumbnail IS NOT NULL ORDER BY c.id LIMIT 1")
        return try statement.step() ? statement.blob(0) : nil
    }

    // MARK: verify

    private func verify(_ catalog: Catalog) throws -> ExitCode {
        let cancellation = SignalWatcher.beginCancellable()
        let selection: Verifier.Selection = runID.map { .run($0) } ?? (paths.isEmpty ? .all : .paths(paths))
        // Progress as snap shows it: a live line on a terminal, else a plain line a second.
        let showProgress = !global.quiet && !global.json && !global.noProgress
        let line = showProgress ? ProgressLine(console: console, live: console.stderrIsTerminal) : nil
        let verifier = Verifier(catalog: catalog, cancellation: cancellation, jobs: jobs) { done, total, bytes in
            line?.show { "verifying \(done)/\(total)  \(Units.bytes(bytes))" }
        }
        let report = try verifier.verify(selection, repair: repair)
        line?.clear()
        // Cut short (SIGKILL, a full catalog disk) and not yet repaired: the files it saved last
        // may have no row, so "all ok" could not be said of it (--repair closes them first).
        // Still saving: what they had recorded was checked, not the run, which goes on.
        var interrupted: [Int] = [], live: [Int] = []
        if !report.cancelled, selection.coversRuns {
            let running = try catalog.userErrors { try Repair(catalog: catalog).runningRuns(selection) }
            interrupted = repair ? [] : running.interrupted.map(\.id)
            live = running.live.map(\.id)
        }
        let seconds = Double(report.elapsedMicroseconds) / 1e6
        let rate = seconds > 0 ? Double(report.bytesRead) / 1e6 / seconds : 0
        if global.json {
            var object: [String: Any] = [
                "event": "summary", "checked": report.checked, "bytes_read": report.bytesRead,
                "elapsed_s": seconds, "mb_per_s": rate, "cancelled": report.cancelled,
                "problems": JSONText(array: report.problems.lazy.filter { $0.outcome != .replaced }) {
                    ["save_id": $0.saveID, "path": $0.path, "outcome": $0.outcome.rawValue, "detail": $0.detail] as [String: Any]
                },
                "replaced_saves": JSONText(array: report.problems.lazy.filter { $0.outcome == .replaced }) {
                    ["save_id": $0.saveID, "path": $0.path, "detail": $0.detail] as [String: Any]
                },
                "not_in_catalog": report.unknownPaths,
            ]
            for outcome in Verifier.Outcome.allCases { object[outcome.rawValue] = report.counts[outcome] ?? 0 }
            object["data"] = [
                "ok_bytes": report.bytes[.ok] ?? 0, "lost_bytes": report.bytes[.missing] ?? 0,
                "corrupted_bytes": report.bytes[.corrupt] ?? 0, "overwritten_bytes": report.bytes[.aliased] ?? 0,
            ]
            if let capacity = report.estimatedCapacity { object["estimated_capacity_bytes"] = capacity }
            object["gone_directories"] = report.goneDirectories
            object["interrupted_runs"] = interrupted
            object["running_runs"] = live
            if let repaired = report.repair {
                object["repaired"] = ["runs_closed": repaired.runsClosed, "files_adopted": repaired.filesAdopted,
                                      "temporary_files_removed": repaired.temporaryFilesRemoved, "rows_marked": repaired.rowsMarked,
                                      "deletions_finished": repaired.deletionsFinished, "unrecognized_files": repaired.unrecognizedFiles,
                                      "empty_unrecognized_files": repaired.emptyUnrecognizedFiles]
            }
            console.outRaw(JSONLine.encode(object))
        } else if !global.quiet {
            // The problems in chunks (millions of lines when a card is missing), the summary after.
            var text = ""
            for problem in report.problems {
                text += "\(problem.outcome.rawValue): \(problem.path.printable): \(problem.detail)\n"
                if text.utf8.count >= 1 << 16 {
                    console.out(text)
                    text = ""
                }
            }
            // "replaced" only where it happened: it is rare, and not a problem.
            let counts = Verifier.Outcome.allCases.filter { $0 != .replaced || report.counts[$0] != nil }
                .map { "\(report.counts[$0] ?? 0) \($0.rawValue)" }.joined(separator: ", ")
            text += (report.cancelled ? "cancelled after " : "verified ") + "\(report.checked) files: \(counts); "
                + "\(Units.bytes(report.bytesRead)) read in \(Units.duration(microseconds: report.elapsedMicroseconds))"
                + " (\(Format.fixed(rate, 1)) MB/s)\n"
            // As f3read counts it: the data, not the files.
            text += "data: \(Units.bytes(report.bytes[.ok] ?? 0)) ok, \(Units.bytes(report.bytes[.missing] ?? 0)) lost, "
                + "\(Units.bytes(report.bytes[.corrupt] ?? 0)) corrupted, \(Units.bytes(report.bytes[.aliased] ?? 0)) overwritten\n"
            if let capacity = report.estimatedCapacity {
                text += "the device wraps around every \(Units.bytes(capacity)): \(report.wrapDistances.count) file(s) hold data "
                    + "written that far after them, so it holds about \(Units.bytes(capacity)), not what it claims (a fake-capacity device?)\n"
            }
            if let first = report.goneDirectories.first {
                let more = report.goneDirectories.count > 1 ? " and \(report.goneDirectories.count - 1) more" : ""
                text += "missing files were in directories that are gone (\(first)\(more)): is the card or share they are on mounted?\n"
            }
            for run in live {
                text += "still running: run \(run) is saving now; the saves it had recorded were checked, not those it "
                    + "saves after: 'camroll verify --run \(run)' again when it ends\n"
            }
            for run in interrupted {
                text += "interrupted: run \(run) did not finish (its process ended without closing it); files it saved "
                    + "last may have no row: 'camroll verify --repair' records them\n"
            }
            if let repaired = report.repair {
                text += "repaired: \(repaired.runsClosed) interrupted run(s) closed, \(repaired.filesAdopted) unrecorded file(s) "
                    + "recorded, \(repaired.temporaryFilesRemoved) temporary file(s) removed, \(repaired.rowsMarked) row(s) marked"
                    + (repaired.deletionsFinished > 0 ? ", \(repaired.deletionsFinished) interrupted deletion(s) finished" : "") + "\n"
                if let first = repaired.unrecognizedFiles.first {
                    let count = repaired.unrecognizedFiles.count, empty = repaired.emptyUnrecognizedFiles
                    let more = count > 1 ? " and \(count - 1) more" : ""
                    let why = [
                        empty > 0 ? (empty == count ? "" : "\(empty) of them ") + "empty: saves whose data a power cut kept from the disk" : nil,
                        count > empty ? "a save a crash cut short where names are not atomic (FAT), or another program's file" : nil,
                    ].compactMap { $0 }.joined(separator: "; ")
                    text += "left alone: \(count) file(s) under the names of a run closed here hold none of "
                        + "its photos (\(first)\(more)): \(why)\n"
                }
            }
            console.out(text)
        }
        for path in report.unknownPaths {
            console.error("\(path) is not in the catalog \(catalog.path)")
        }
        if report.cancelled { return ExitCode(cancelledBy: cancellation.signal) }
        // With --repair too: the catalog now says what is on disk, but data that was lost is
        // still lost, and the exit status says so.
        return report.allOK && interrupted.isEmpty ? .success : .failure
    }

    // MARK: delete

    /// Removes files and marks their rows, in batches, so that any stop leaves catalog and disk
    /// in agreement: a batch's rows are committed as `deleting` before its files are unlinked,
    /// then as `deleted`. Ctrl-C finishes the current batch; after SIGKILL or power loss,
    /// `verify --repair` finishes the rows still `deleting`. Each commit is synced before the
    /// unlinks that follow it: otherwise a power cut can keep the unlinks and lose the marks
    /// (a file system commits its metadata on its own schedule), and verify would call every
    /// file deleted so far missing.
    private func delete(_ catalog: Catalog) throws -> ExitCode {
        let cancellation = SignalWatcher.beginCancellable()
        if !dryRun { try catalog.syncEveryCommit(true) }
        // Held while deleting: a repair meanwhile leaves this delete's rows to it. (Best effort:
        // a lock file this user cannot open leaves the delete as it was without it.) A dry run
        // takes no share: it deletes nothing, and its catalog is open read-only.
        let deletionLock = dryRun ? nil : try? RunLock(catalog: catalog.path)
        deletionLock?.holdForDeletion()
        defer { withExtendedLifetime(deletionLock) {} }
        let filter: String
        if let saveID { filter = "s.id = \(saveID)" }
        else if let captureID { filter = "s.capture_id = \(captureID)" }
        else { filter = "c.run_id = \(runID ?? 0)" }
        // Rows left `deleting` are finished here only when they were a stopped delete's, so only
        // those there are as it begins, when no other delete is at work: the rows a delete at
        // work beside this one marks are its own. (A stopped delete leaves one batch of them.)
        var stopped: [Int] = []
        let anotherAtWork = dryRun ? RunLock.isHeld(run: RunLock.deletionByte, catalog: catalog.path) : deletionLock?.anotherDeletionIsAtWork()
        if anotherAtWork == false {
            let deleting = try catalog.database.prepare(
                "SELECT s.id FROM saves s JOIN captures c ON c.id = s.capture_id WHERE \(filter) AND s.status = 'deleting'")
            while try deleting.step() { stopped.append(deleting.int(0)) }
        }
        let statuses = "s.status IN ('saved', 'missing', 'corrupt')"
            + (stopped.isEmpty ? "" : " OR (s.status = 'deleting' AND s.id IN (\(stopped.map(String.init).joined(separator: ","))))")
        // The files there are when it begins (not those a run still at work saves meanwhile),
        // read from the catalog a batch at a time: a run of millions of saves is deleted in the
        // memory of one batch.
        let range = try catalog.database.prepare(
            "SELECT min(s.id), max(s.id), count(*) FROM saves s JOIN captures c ON c.id = s.capture_id WHERE \(filter) AND (\(statuses))")
        _ = try range.step()
        let (first, last, total) = (range.int(0), range.int(1), range.int(2))
        range.reset()
        guard total > 0 else {
            throw CamrollError(.noInput, "nothing to delete: no saved file matches in \(catalog.path)")
        }
        // In the order of the saves' ids, as verify reads them (see Verifier.RowQuery.batch). A
        // catalog only read (a dry run) may predate the saves' directories (schema step 6).
        let directories = try catalog.recordsSaveDirectories() ? "s.directory_device, s.directory_inode" : "NULL, NULL"
        let next = try catalog.database.prepare(
            "SELECT s.id, s.path, \(Catalog.plausibleBytes), s.xxh128, s.status, \(directories) "
                + "FROM saves s CROSS JOIN captures c ON c.id = s.capture_id "
                + "WHERE \(filter) AND (\(statuses)) AND s.id <= \(last) AND s.id > ? ORDER BY s.id LIMIT \(Self.deleteBatch)")
        var tally = DeleteTally()
        var done = 0
        var after = first - 1
        while !cancellation.isCancelled {
            var batch: [DeleteTarget] = []
            try next.bind(.int(after))
            while try next.step() { batch.append(DeleteTarget(next)) }
            guard let last = batch.last else { break }
            after = last.id
            if dryRun {
                try listBatch(batch, catalog: catalog, tally: &tally)
            } else {
                try deleteBatch(batch, catalog: catalog, tally: &tally)
            }
            done += batch.count
        }
        if dryRun {
            var text = (cancellation.isCancelled && done < total ? "cancelled after \(done)/\(total): " : "")
                + "dry run: would delete \(tally.deleted) file(s), \(Units.bytes(tally.deletedBytes)); nothing was deleted"
            if tally.alreadyMissing > 0 { text += "; \(tally.alreadyMissing) are already missing (rows would be marked deleted)" }
            if tally.takenOver > 0 { text += "; \(tally.takenOver) path(s) now hold a later save's file (would be kept)" }
            if !tally.refused.isEmpty { text += "; \(tally.refused.count) would be kept (use --force to delete them)" }
            let keptAnyway = tally.notFiles.count + tally.elsewhere
            if keptAnyway > 0 { text += "; \(keptAnyway) would be kept, --force or not (not a regular file, or not in the directory its run saved into)" }
            if !global.quiet { console.out(text + "\n") }
            return cancellation.isCancelled && done < total ? ExitCode(cancelledBy: cancellation.signal) : .success
        }
        if !global.quiet {
            var text = (cancellation.isCancelled && done < total ? "cancelled after \(done)/\(total): " : "")
                + "deleted \(tally.deleted) file(s), \(Units.bytes(tally.deletedBytes))"
            if tally.alreadyMissing > 0 { text += "; \(tally.alreadyMissing) were already missing (rows marked deleted)" }
            if tally.takenByAnother > 0 { text += "; \(tally.takenByAnother) were being deleted by another command (left to it)" }
            if tally.takenOver > 0 { text += "; \(tally.takenOver) path(s) now hold a later save's file (kept)" }
            console.out(text + "\n")
        }
        func some(_ paths: [String]) -> String { paths.prefix(3).joined(separator: ", ") + (paths.count > 3 ? ", …" : "") }
        if let first = tally.elsewhereDirectories.first {
            let others = tally.elsewhereDirectories.count - 1
            console.error(
                "\(tally.elsewhere) file(s) kept: \(first)" + (others > 0 ? " (and \(others) other director\(others == 1 ? "y" : "ies"))" : ""),
                hint: "camroll deletes a file only in the directory it saved it into, with --force or without. "
                    + "If the files there are the ones to delete, remove them yourself.")
        }
        if !tally.notFiles.isEmpty {
            console.error(
                "\(tally.notFiles.count) path(s) kept, not being a file camroll saved any more: \(some(tally.notFiles))",
                hint: "camroll never deletes what is not a regular file, with --force or without; remove it yourself if it is yours.")
        }
        if !tally.refused.isEmpty {
            console.error("\(tally.refused.count) file(s) no longer match their recorded content and were kept: \(some(tally.refused))",
                          hint: force ? nil : "Use --force to delete them anyway.")
        }
        if tally.elsewhere > 0 || !tally.notFiles.isEmpty || !tally.refused.isEmpty { return .failure }
        if cancellation.isCancelled && done < total {
            return ExitCode(cancelledBy: cancellation.signal)
        }
        return .success
    }

    static let deleteBatch = 256
    private typealias DeleteTarget = SaveDeletion.Target
    private typealias DeleteTally = SaveDeletion.Tally

    /// `--dry-run`: the batch's files, each as `deleteBatch` would find it, printed and counted;
    /// nothing unlinked, no row changed.
    private func listBatch(_ batch: [DeleteTarget], catalog: Catalog, tally: inout DeleteTally) throws {
        let deletion = SaveDeletion(catalog: catalog, force: force)
        let laterOwner = try deletion.laterOwnerQuery()
        let directories = SaveDirectories()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var text = ""
        for target in batch {
            switch try deletion.decide(target, laterOwner: laterOwner, directories: directories, buffer: &buffer) {
            case .takenOver:
                tally.takenOver += 1
                text += "would keep \(target.path): a later save's file is there now\n"
            case .alreadyMissing:
                tally.alreadyMissing += 1
                text += "already missing \(target.path)\n"
            case .notRegular(let kind):
                if target.status != "deleting" { tally.notFiles.append("\(target.path) (\(kind))") }
                text += "would keep \(target.path): not a regular file (\(kind))\n"
            case .elsewhere(let why):
                if target.status != "deleting" {
                    tally.elsewhere += 1
                    if tally.elsewhereDirectories.last != why { tally.elsewhereDirectories.append(why) }
                }
                text += "would keep \(target.path): \(why)\n"
            case .unreadable(let error):
                throw RegularFile.Problem.stopError(error, path: target.path)
            case .directoryFailed(let error):
                throw CamrollError(error.accessExitCode, "cannot delete \(target.path): \(error.description)")
            case .changed where !force:
                if target.status != "deleting" { tally.refused.append(target.path) }
                text += "would keep \(target.path): no longer matches its recorded content\n"
            case .changed, .unchanged:
                tally.deleted += 1
                tally.deletedBytes = tally.deletedBytes.addingSaturated(target.bytes)
                text += "would delete \(target.path)\n"
            }
        }
        if !global.quiet { console.out(text) }
    }

    private func deleteBatch(_ batch: [DeleteTarget], catalog: Catalog, tally: inout DeleteTally) throws {
        try SaveDeletion(catalog: catalog, force: force).delete(batch, tally: &tally)
    }

    // MARK: stats

    /// Every save the runs made, whatever became of its file since (deleted, replaced, missing):
    /// a run's figures are what it did, and outlive its files.
    private func stats(_ catalog: Catalog) throws -> ExitCode {
        // The newest run that saved anything unless --run or --all: what a person asks after a
        // run, at the cost of that run whatever the catalog holds besides.
        let runID = all ? nil : try self.runID ?? catalog.newestRunWithSaves()
        if !all && runID == nil { throw CamrollError(.noInput, "no saves in \(catalog.path)") }
        let where_ = runID.map { "WHERE c.run_id = \($0)" } ?? ""
        let statement = try catalog.database.prepare(
            """
            SELECT \(Catalog.plausibleDuration) AS duration, \(Catalog.plausibleBytes), c.run_id, s.job
            FROM saves s JOIN captures c ON c.id = s.capture_id \(where_) ORDER BY duration
            """)
        var durations: [Int] = []
        // `snap --jobs`: what each writer of each run saved (saves, bytes), by job number.
        var jobs: [Int: (saves: Int, bytes: Int)] = [:]
        var runsWithJobs: Set<Int> = []
        var runs: Set<Int> = []
        while try statement.step() {
            durations.append(statement.int(0))
            runs.insert(statement.int(2))
            if !statement.isNull(3) {
                let job = statement.int(3)
                let sofar = jobs[job] ?? (0, 0)
                jobs[job] = (sofar.saves + 1, sofar.bytes.addingSaturated(statement.int(1)))
                runsWithJobs.insert(statement.int(2))
            }
        }
        guard !durations.isEmpty else {
            throw CamrollError(.noInput, "no saves" + (runID.map { " in run \($0)" } ?? "") + " in \(catalog.path)")
        }
        func percentile(_ fraction: Double) -> Int {
            durations[min(durations.count - 1, max(0, Int((fraction * Double(durations.count)).rounded(.up)) - 1))]
        }
        // Each run's own saving time: the idle time between runs, and within a run its capture
        // and pauses, are nobody's saving time.
        let byRun = try RunFigures.byRun(catalog, runID: runID)
        let figures = runs.reduce(RunFigures()) { $0 + (byRun[$1] ?? RunFigures()) }
        let histogram = LatencyBuckets(durations)
        // A job's rate over the saving time of the runs it saved in (the writers of a run share it).
        let jobSeconds = Double(runsWithJobs.reduce(0) { $0.addingSaturated(byRun[$1]?.savingMicroseconds ?? 0) }) / 1e6
        let jobRates = jobs.keys.sorted().map { job in
            (job: job, saves: jobs[job]!.saves, bytes: jobs[job]!.bytes,
             mbPerSecond: jobSeconds > 0 ? Double(jobs[job]!.bytes) / 1e6 / jobSeconds : 0)
        }
        // The run in time: a compact chart in the text, all three charts in the SVG.
        let timeline = try SaveTimeline(catalog: catalog, runID: runID)
        var plotted: String?
        if let plot, let timeline {
            let path = try AbsolutePath.resolve(plot.path)
            let bytes = try RunPlot.file(timeline, kind: plot.kind)
            try bytes.withUnsafeBytes { _ = try AtomicFileWriter(existing: .replace, sync: false).write([$0], to: path) }
            plotted = path
        }
        if global.json {
            var object: [String: Any] = [
                "jobs": jobRates.map { ["job": $0.job, "saves": $0.saves, "bytes": $0.bytes, "mb_per_s": $0.mbPerSecond] as [String: Any] },
                "saves": durations.count, "bytes": figures.bytes, "saving_s": figures.savingSeconds,
                "saves_per_s": figures.savesPerSecond, "mb_per_s": figures.megabytesPerSecond,
                "latency_us": ["p50": percentile(0.5), "p95": percentile(0.95), "p99": percentile(0.99),
                               "max": durations.last ?? 0, "min": durations.first ?? 0],
                "histogram": histogram.buckets.map { ["le_us": $0.upper, "count": $0.count] },
            ]
            if let plotted { object["plot"] = plotted }
            console.outRaw(JSONLine.encode(object))
            return .success
        }
        var text = "\(durations.count) save\(durations.count == 1 ? "" : "s"), \(Units.bytes(figures.bytes)) in "
            + "\(Units.duration(microseconds: figures.savingMicroseconds)) saving: "
            + "\(Format.fixed(figures.savesPerSecond, 1)) saves/s, \(Format.fixed(figures.megabytesPerSecond, 1)) MB/s\n"
        text += "save latency  min \(Units.duration(microseconds: durations.first ?? 0))  p50 \(Units.duration(microseconds: percentile(0.5)))"
            + "  p95 \(Units.duration(microseconds: percentile(0.95)))  p99 \(Units.duration(microseconds: percentile(0.99)))"
            + "  max \(Units.duration(microseconds: durations.last ?? 0))\n"
        if !jobRates.isEmpty {
            text += "\(jobRates.count) jobs: " + jobRates.map { "\($0.job): \(Format.fixed($0.mbPerSecond, 1)) MB/s (\($0.saves))" }
                .joined(separator: ", ") + "\n"
        }
        text += "\n"
        text += histogram.text()
        if let timeline { text += "\n" + ThroughputChart.text(timeline, width: min(console.stdoutColumns ?? 72, 120)) }
        if let plotted, let timeline { text += "charts of run \(timeline.runID) written to \(plotted)\n" }
        console.out(text)
        return .success
    }
}

/// Save latencies in power-of-two buckets, drawn as bars: a stalling disk shows as a tail. The
/// bars' lengths are on a log scale of the count (`scaled`): on a linear one, the few saves of
/// the tail that a storage test looks for were a bar of one character beside thousands.
struct LatencyBuckets {
    var buckets: [(upper: Int, count: Int)] = []

    init(_ sortedDurations: [Int]) {
        var upper = 1
        var index = 0
        while index < sortedDurations.count {
            var count = 0
            while index < sortedDurations.count && sortedDurations[index] <= upper {
                count += 1
                index += 1
            }
            if count > 0 || !buckets.isEmpty { buckets.append((upper, count)) }
            upper *= 2
        }
        while buckets.last?.count == 0 { buckets.removeLast() }
    }

    /// `count` as a fraction of `most` on the log scale of both bars and plot: log(1 + n), so
    /// that 0 is nothing and 1 is a bar.
    static func scaled(_ count: Int, of most: Int) -> Double {
        most > 0 ? log10(1 + Double(max(0, count))) / log10(1 + Double(most)) : 0
    }

    func text(width: Int = 50) -> String {
        let most = buckets.map(\.count).max() ?? 1
        return "save latency histogram (saves per bucket; bars on a log scale)\n" + buckets.map { bucket in
            let length = Int((Self.scaled(bucket.count, of: most) * Double(width)).rounded())
            let bar = String(repeating: "█", count: bucket.count == 0 ? 0 : max(1, length))
            let label = "≤ " + Units.duration(microseconds: bucket.upper)
            return label.padded(to: 12) + Format.integer(bucket.count, width: 8) + " " + bar
        }.joined(separator: "\n") + "\n"
    }
}

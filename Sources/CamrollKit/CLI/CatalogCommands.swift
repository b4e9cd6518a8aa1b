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
    var csv = false
    var limit: Int?
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
                case "--csv": csv = true
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
        let writes = command == "delete" || (command == "verify" && repair)
        let catalog = try Catalog(path: path, readOnly: !writes, mayCreate: false)
        defer { catalog.checkpoint() }
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

    private func list(_ catalog: Catalog) throws -> ExitCode {
        let sql: String
        if let run = runID {
            sql = """
                SELECT s.id, s.seq, s.path, s.bytes, s.xxh128, s.saved_at, s.duration_us, s.synced, s.status
                FROM saves s JOIN captures c ON c.id = s.capture_id WHERE c.run_id = \(run) ORDER BY s.seq, s.id\(limitClause)
                """
        } else {
            sql = """
                SELECT r.id, r.started_at, r.status, r.device, count(s.id) AS saved, r.requested_count AS requested,
                       coalesce(sum(\(Catalog.plausibleBytes)), 0) AS bytes,
                       round(coalesce(sum(\(Catalog.plausibleBytes)), 0) / 1e6 / max(0.001,
                             (julianday(coalesce(r.finished_at, max(s.saved_at))) - julianday(r.started_at)) * 86400), 2)
                         AS mb_per_s
                FROM runs r
                LEFT JOIN captures c ON c.run_id = r.id
                LEFT JOIN saves s ON s.capture_id = c.id AND s.status = 'saved'
                GROUP BY r.id ORDER BY r.id DESC\(limitClause)
                """
        }
        try Table.stream(catalog.database, sql, as: global.json ? .json : csv ? .csv : .text) { text in
            if global.json { console.outRaw(text) } else { console.out(text) }
            return !Console.stdoutHasFailed
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
                   jpeg_bytes, xxh128, length(thumbnail) AS thumbnail_bytes,
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
        let text = "run \(runID)\n" + runTable.vertical() + "\ncaptures\n" + captures.text() + "\nsaves by status\n" + statuses.text()
        console.out(text)
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

    /// The capture's thumbnail (or with --full its saved file) drawn as wide as the terminal,
    /// when stdout is one (or a mode or --color always asks for it anyway).
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
        let size = TerminalSize.of(STDOUT_FILENO) ?? TerminalSize(columns: 80, rows: 24, widthPixels: 0, heightPixels: 0)
        // As wide as the terminal; as high as that width makes it.
        let text = try painter.draw(frame, fitting: size.columns, rows: size.columns, cell: size.cell)
        return String(decoding: text, as: UTF8.self) + "\n"
    }

    private func firstThumbnail(_ catalog: Catalog, filter: String) throws -> [UInt8]? {
        let statement = try catalog.database.prepare("SELECT thumbnail FROM captures WHERE \(filter) AND thumbnail IS NOT NULL ORDER BY id LIMIT 1")
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

    private struct DeleteTarget {
        var id: Int
        var path: String
        var bytes: Int
        var hash: String
        var status: String
        /// The directory it was saved into, where its row says.
        var directory: FileIdentity?
    }

    /// What happened to each file `delete` was asked to remove.
    private struct DeleteTally {
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

    /// Removes files and marks their rows, in batches, so that any stop leaves catalog and disk
    /// in agreement: a batch's rows are committed as `deleting` before its files are unlinked,
    /// then as `deleted`. Ctrl-C finishes the current batch; after SIGKILL or power loss,
    /// `verify --repair` finishes the rows still `deleting`. Each commit is synced before the
    /// unlinks that follow it: otherwise a power cut can keep the unlinks and lose the marks
    /// (a file system commits its metadata on its own schedule), and verify would call every
    /// file deleted so far missing.
    private func delete(_ catalog: Catalog) throws -> ExitCode {
        let cancellation = SignalWatcher.beginCancellable()
        try catalog.syncEveryCommit(true)
        // Held while deleting: a repair meanwhile leaves this delete's rows to it. (Best effort:
        // a lock file this user cannot open leaves the delete as it was without it.)
        let deletionLock = try? RunLock(catalog: catalog.path)
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
        if deletionLock?.anotherDeletionIsAtWork() == false {
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
        // In the order of the saves' ids, as verify reads them (see Verifier.RowQuery.batch).
        let next = try catalog.database.prepare(
            "SELECT s.id, s.path, \(Catalog.plausibleBytes), s.xxh128, s.status, s.directory_device, s.directory_inode "
                + "FROM saves s CROSS JOIN captures c ON c.id = s.capture_id "
                + "WHERE \(filter) AND (\(statuses)) AND s.id <= \(last) AND s.id > ? ORDER BY s.id LIMIT \(Self.deleteBatch)")
        var tally = DeleteTally()
        var done = 0
        var after = first - 1
        while !cancellation.isCancelled {
            var batch: [DeleteTarget] = []
            try next.bind(.int(after))
            while try next.step() {
                let directory = next.isNull(5) || next.isNull(6)
                    ? nil : FileIdentity(device: UInt64(bitPattern: Int64(next.int(5))), inode: UInt64(bitPattern: Int64(next.int(6))))
                batch.append(DeleteTarget(id: next.int(0), path: next.text(1) ?? "", bytes: next.int(2),
                                          hash: next.text(3) ?? "", status: next.text(4) ?? "", directory: directory))
            }
            guard let last = batch.last else { break }
            after = last.id
            try deleteBatch(batch, catalog: catalog, tally: &tally)
            done += batch.count
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

    private func deleteBatch(_ batch: [DeleteTarget], catalog: Catalog, tally: inout DeleteTally) throws {
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
        // A later save of the same path owns the file there now (older catalogs may not say so).
        let laterOwner = try catalog.database.prepare(
            "SELECT 1 FROM saves WHERE path = ? AND id > ? AND status IN ('saved', 'missing', 'corrupt', 'deleting') LIMIT 1")
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
            if try laterOwner.bind(.text(target.path), .int(target.id)).stepInt() != nil {
                outcome.append((target.id, "replaced"))
                tally.takenOver += 1
                continue
            }
            // Read and unlinked in its directory, and only in the one its run saved into.
            let name = PathText.lastComponent(of: target.path)
            let directoryFD: Int32
            switch directories.open(PathText.directory(of: target.path), recorded: target.directory) {
            case .directory(let fd): directoryFD = fd
            case .missing:
                outcome.append((target.id, "deleted"))
                tally.alreadyMissing += 1
                continue
            case .elsewhere(let why):
                outcome.append((target.id, keptStatus))
                if target.status != "deleting" {
                    tally.elsewhere += 1
                    if tally.elsewhereDirectories.last != why { tally.elsewhereDirectories.append(why) }
                }
                continue
            case .failed(let error):
                restoreBatch()
                throw CamrollError(error.accessExitCode, "cannot delete \(target.path): \(error.description)")
            }
            switch Verifier.readFile(target.path, in: directoryFD, name: name, buffer: &buffer) {
            case .failure(.missing):
                outcome.append((target.id, "deleted"))
                tally.alreadyMissing += 1
                continue
            case .success(let (size, hash)) where size == target.bytes && hash == target.hash:
                break
            case .failure(.notRegular(let kind)):
                // Never unlinked, even with --force: it is not a file camroll wrote.
                outcome.append((target.id, keptStatus))
                if target.status != "deleting" { tally.notFiles.append("\(target.path) (\(kind))") }
                continue
            case .failure(.cannotRead(let error)):
                // Not known to have changed, nor to be what was saved: neither deleted nor refused.
                restoreBatch()
                throw RegularFile.Problem.stopError(error, path: target.path)
            default:
                guard force else {
                    outcome.append((target.id, keptStatus))
                    if target.status != "deleting" { tally.refused.append(target.path) }
                    continue
                }
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

    // MARK: stats

    private func stats(_ catalog: Catalog) throws -> ExitCode {
        let where_ = runID.map { "WHERE c.run_id = \($0) AND s.status = 'saved'" } ?? "WHERE s.status = 'saved'"
        let statement = try catalog.database.prepare(
            """
            SELECT \(Catalog.plausibleDuration) AS duration, \(Catalog.plausibleBytes), s.saved_at, c.run_id, s.job
            FROM saves s JOIN captures c ON c.id = s.capture_id \(where_) ORDER BY duration
            """)
        var durations: [Int] = []
        var bytes = 0
        // `snap --jobs`: what each writer saved (saves, bytes), by job number.
        var jobs: [Int: (saves: Int, bytes: Int)] = [:]
        // Each run's own span: the idle time between runs is nobody's saving time.
        var runs: [Int: (first: String, last: String, busy: Int, jobs: Set<Int>)] = [:]
        while try statement.step() {
            durations.append(statement.int(0))
            bytes = bytes.addingSaturated(statement.int(1))
            let at = statement.text(2) ?? ""
            if !statement.isNull(4) {
                let job = statement.int(4)
                let sofar = jobs[job] ?? (0, 0)
                jobs[job] = (sofar.saves + 1, sofar.bytes.addingSaturated(statement.int(1)))
            }
            let run = runs[statement.int(3)] ?? (at, at, 0, [])
            runs[statement.int(3)] = (min(run.first, at), max(run.last, at), run.busy.addingSaturated(statement.int(0)),
                                      statement.isNull(4) ? run.jobs : run.jobs.union([statement.int(4)]))
        }
        guard !durations.isEmpty else {
            throw CamrollError(.noInput, "no saves" + (runID.map { " in run \($0)" } ?? "") + " in \(catalog.path)")
        }
        func percentile(_ fraction: Double) -> Int {
            durations[min(durations.count - 1, max(0, Int((fraction * Double(durations.count)).rounded(.up)) - 1))]
        }
        let span = runs.values.reduce(0.0) { total, run in
            // Parallel writers (`--jobs`) are busy at the same time: their time counts once.
            total + max(Timestamp.seconds(between: run.first, and: run.last), Double(run.busy) / 1e6 / Double(max(1, run.jobs.count)))
        }
        let savesPerSecond = span > 0 ? Double(durations.count) / span : 0
        let megabytesPerSecond = span > 0 ? Double(bytes) / 1e6 / span : 0
        let histogram = LatencyBuckets(durations)
        let jobRates = jobs.keys.sorted().map { job in
            (job: job, saves: jobs[job]!.saves, bytes: jobs[job]!.bytes, mbPerSecond: span > 0 ? Double(jobs[job]!.bytes) / 1e6 / span : 0)
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
                "saves": durations.count, "bytes": bytes, "saves_per_s": savesPerSecond, "mb_per_s": megabytesPerSecond,
                "latency_us": ["p50": percentile(0.5), "p95": percentile(0.95), "p99": percentile(0.99),
                               "max": durations.last ?? 0, "min": durations.first ?? 0],
                "histogram": histogram.buckets.map { ["le_us": $0.upper, "count": $0.count] },
            ]
            if let plotted { object["plot"] = plotted }
            console.outRaw(JSONLine.encode(object))
            return .success
        }
        var text = "\(durations.count) saves, \(Units.bytes(bytes)) over \(Units.duration(microseconds: Int(min(span, 1e12) * 1e6))): "
            + "\(Format.fixed(savesPerSecond, 1)) saves/s, \(Format.fixed(megabytesPerSecond, 1)) MB/s\n"
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

/// Save latencies in power-of-two buckets, drawn as bars: a stalling disk shows as a tail.
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

    func text(width: Int = 50) -> String {
        let most = buckets.map(\.count).max() ?? 1
        return buckets.map { bucket in
            let bar = String(repeating: "█", count: bucket.count == 0 ? 0 : max(1, bucket.count * width / most))
            let label = "≤ " + Units.duration(microseconds: bucket.upper)
            return label.padded(to: 12) + Format.integer(bucket.count, width: 8) + " " + bar
        }.joined(separator: "\n") + "\n"
    }
}

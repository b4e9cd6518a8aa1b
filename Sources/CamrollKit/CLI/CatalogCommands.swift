import Foundation
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
    var force = false
    var csv = false
    let console: Console
    let environment: [String: String]

    init(command: String, arguments: [String], environment: [String: String]) throws {
        self.command = command
        self.environment = environment
        var scanner = ArgumentScanner(arguments, command: command)
        var global = GlobalOptions()
        var positionals: [String] = []
        while let token = scanner.next() {
            if try global.parse(token, &scanner) { continue }
            switch token {
            case .positional(let word): positionals.append(word)
            case .option(let name, let inline):
                func id() throws -> Int {
                    try ValueParser.integer(scanner.value(for: name, inline: inline), option: name, range: 1...Int.max)
                }
                switch (name, command) {
                case ("-h", _), ("--help", _): throw HelpRequest(command: command)
                case ("--db", _): database = try scanner.value(for: name, inline: inline)
                case ("--run", "list"), ("--run", "verify"), ("--run", "stats"), ("--run", "delete"), ("--run", "show"):
                    runID = try id()
                case ("--capture", "delete"), ("--capture", "show"): captureID = try id()
                case ("--save", "delete"): saveID = try id()
                case ("--repair", "verify"): repair = true
                case ("--force", "delete"): force = true
                case ("--csv", "list"): csv = true
                default: throw scanner.usageError("unknown option '\(name)'")
                }
            }
        }
        switch command {
        case "verify":
            paths = positionals
            if runID != nil && !paths.isEmpty { throw scanner.usageError("give --run or paths, not both") }
        case "show":
            guard positionals.count <= 1 else { throw scanner.usageError("'show' takes one run ID") }
            if let word = positionals.first {
                guard let id = Int(word), id > 0 else { throw scanner.usageError("invalid run ID '\(word)'") }
                runID = id
            }
            guard (runID != nil) != (captureID != nil) else {
                throw scanner.usageError("say which: 'camroll show RUN_ID' or 'camroll show --capture ID'")
            }
        case "delete":
            guard positionals.isEmpty else { throw scanner.usageError("unexpected argument '\(positionals[0])'") }
            guard [runID, captureID, saveID].compactMap({ $0 }).count == 1 else {
                throw scanner.usageError("say what to delete: --save ID, --capture ID or --run ID")
            }
        default:
            guard positionals.isEmpty else { throw scanner.usageError("unexpected argument '\(positionals[0])'") }
        }
        self.global = global
        self.console = Console(colorMode: global.color, environment: environment)
    }

    func run() throws -> ExitCode {
        let path = AbsolutePath.resolve(database ?? Catalog.defaultPath(environment: environment))
        guard FileManager.default.fileExists(atPath: path) else {
            throw CamrollError(.noInput, "no catalog at \(path)", hint: "Take photos with 'camroll snap' first, or name one with --db PATH.")
        }
        let catalog = try Catalog(path: path)
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

    private func list(_ catalog: Catalog) throws -> ExitCode {
        let table: Table
        if let run = runID {
            table = try Table.query(catalog.database, """
                SELECT s.id, s.seq, s.path, s.bytes, s.xxh128, s.saved_at, s.duration_us, s.synced, s.status
                FROM saves s JOIN captures c ON c.id = s.capture_id WHERE c.run_id = \(run) ORDER BY s.seq, s.id
                """)
        } else {
            table = try Table.query(catalog.database, """
                SELECT r.id, r.started_at, r.status, r.device, count(s.id) AS saved, r.requested_count AS requested,
                       coalesce(sum(s.bytes), 0) AS bytes,
                       round(coalesce(sum(s.bytes), 0) / 1e6 / max(0.001,
                             (julianday(coalesce(r.finished_at, max(s.saved_at))) - julianday(r.started_at)) * 86400), 2)
                         AS mb_per_s
                FROM runs r
                LEFT JOIN captures c ON c.run_id = r.id
                LEFT JOIN saves s ON s.capture_id = c.id AND s.status = 'saved'
                GROUP BY r.id ORDER BY r.id DESC
                """)
        }
        if global.json {
            console.out(JSONLine.encode(table.objects()))
        } else if csv {
            console.out(table.csv())
        } else {
            console.out(table.text())
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
            SELECT s.status, count(*) AS files, sum(s.bytes) AS bytes FROM saves s JOIN captures c ON c.id = s.capture_id
            WHERE c.\(captureFilter) GROUP BY s.status
            """)
        if global.json {
            console.out(JSONLine.encode([
                "run": runTable.objects().first ?? [:], "captures": captures.objects(), "saves": statuses.objects(),
            ] as [String: Any]))
            return .success
        }
        var text = "run \(runID)\n" + runTable.vertical() + "\ncaptures\n" + captures.text() + "\nsaves by status\n" + statuses.text()
        if let thumbnail = try firstThumbnail(catalog, filter: captureFilter), TerminalImage.canShow(environment: environment, console: console) {
            text += "\n" + (try TerminalImage.halfBlocks(jpeg: thumbnail))
        }
        console.out(text)
        return .success
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
        let verifier = Verifier(catalog: catalog, cancellation: cancellation) { done, total, bytes in
            line?.show { "verifying \(done)/\(total)  \(Units.bytes(bytes))" }
        }
        let report = try verifier.verify(selection, repair: repair)
        line?.clear()
        let seconds = Double(report.elapsedMicroseconds) / 1e6
        let rate = seconds > 0 ? Double(report.bytesRead) / 1e6 / seconds : 0
        if global.json {
            var object: [String: Any] = [
                "event": "summary", "checked": report.checked, "bytes_read": report.bytesRead,
                "elapsed_s": seconds, "mb_per_s": rate, "cancelled": report.cancelled,
                "problems": report.problems.map { ["save_id": $0.saveID, "path": $0.path, "outcome": $0.outcome.rawValue, "detail": $0.detail] as [String: Any] },
            ]
            for outcome in Verifier.Outcome.allCases { object[outcome.rawValue] = report.counts[outcome] ?? 0 }
            if let repaired = report.repair {
                object["repaired"] = ["runs_closed": repaired.runsClosed, "files_adopted": repaired.filesAdopted,
                                      "temporary_files_removed": repaired.temporaryFilesRemoved, "rows_marked": repaired.rowsMarked]
            }
            console.out(JSONLine.encode(object))
        } else if !global.quiet {
            var text = ""
            for problem in report.problems { text += "\(problem.outcome.rawValue): \(problem.path): \(problem.detail)\n" }
            let counts = Verifier.Outcome.allCases.map { "\(report.counts[$0] ?? 0) \($0.rawValue)" }.joined(separator: ", ")
            text += (report.cancelled ? "cancelled after " : "verified ") + "\(report.checked) files: \(counts); "
                + "\(Units.bytes(report.bytesRead)) read in \(Units.duration(microseconds: report.elapsedMicroseconds))"
                + String(format: " (%.1f MB/s)\n", rate)
            if let repaired = report.repair {
                text += "repaired: \(repaired.runsClosed) interrupted run(s) closed, \(repaired.filesAdopted) unrecorded file(s) "
                    + "recorded, \(repaired.temporaryFilesRemoved) temporary file(s) removed, \(repaired.rowsMarked) row(s) marked\n"
            }
            console.out(text)
        }
        if report.cancelled { return cancellation.signal == SIGTERM ? .terminated : .interrupted }
        if repair { return .success }  // the catalog now says what is on disk
        return report.allOK ? .success : .failure
    }

    // MARK: delete

    private func delete(_ catalog: Catalog) throws -> ExitCode {
        let filter: String
        if let saveID { filter = "s.id = \(saveID)" }
        else if let captureID { filter = "s.capture_id = \(captureID)" }
        else { filter = "c.run_id = \(runID ?? 0)" }
        let statement = try catalog.database.prepare(
            "SELECT s.id, s.path, s.bytes, s.xxh128 FROM saves s JOIN captures c ON c.id = s.capture_id WHERE \(filter) AND s.status != 'deleted'")
        var targets: [(id: Int, path: String, bytes: Int, hash: String)] = []
        while try statement.step() {
            targets.append((statement.int(0), statement.text(1) ?? "", statement.int(2), statement.text(3) ?? ""))
        }
        guard !targets.isEmpty else {
            throw CamrollError(.noInput, "nothing to delete: no saved file matches in \(catalog.path)")
        }
        var deleted = 0, deletedBytes = 0, refused: [String] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        // Rows and files change together: the rows are marked in a transaction that commits
        // only after the files are gone; a failure rolls the rows back.
        try catalog.database.transaction {
            let mark = try catalog.database.prepare("UPDATE saves SET status = 'deleted' WHERE id = ?")
            for target in targets {
                if case .success(let (size, hash)) = Verifier.readFile(target.path, buffer: &buffer),
                   !(size == target.bytes && hash == target.hash) && !force {
                    refused.append(target.path)
                    continue
                }
                if unlink(target.path) != 0 && errno != ENOENT {
                    throw CamrollError(.cannotCreate, "cannot delete \(target.path): \(SystemError("unlink").reason)")
                }
                try mark.bind(.int(target.id)).run()
                deleted += 1
                deletedBytes += target.bytes
            }
        }
        if !global.quiet {
            console.out("deleted \(deleted) file(s), \(Units.bytes(deletedBytes))\n")
        }
        if !refused.isEmpty {
            console.error("\(refused.count) file(s) no longer match their recorded content and were kept: \(refused.prefix(3).joined(separator: ", "))\(refused.count > 3 ? ", …" : "")",
                          hint: "Use --force to delete them anyway.")
            return .failure
        }
        return .success
    }

    // MARK: stats

    private func stats(_ catalog: Catalog) throws -> ExitCode {
        let where_ = runID.map { "WHERE c.run_id = \($0) AND s.status = 'saved'" } ?? "WHERE s.status = 'saved'"
        let statement = try catalog.database.prepare(
            "SELECT s.duration_us, s.bytes, s.saved_at FROM saves s JOIN captures c ON c.id = s.capture_id \(where_) ORDER BY s.duration_us")
        var durations: [Int] = []
        var bytes = 0
        var first = "", last = ""
        while try statement.step() {
            durations.append(statement.int(0))
            bytes += statement.int(1)
            let at = statement.text(2) ?? ""
            if first.isEmpty || at < first { first = at }
            if at > last { last = at }
        }
        guard !durations.isEmpty else {
            throw CamrollError(.noInput, "no saves" + (runID.map { " in run \($0)" } ?? "") + " in \(catalog.path)")
        }
        func percentile(_ fraction: Double) -> Int {
            durations[min(durations.count - 1, max(0, Int((fraction * Double(durations.count)).rounded(.up)) - 1))]
        }
        let span = max(Timestamp.seconds(between: first, and: last), Double(durations.reduce(0, +)) / 1e6)
        let savesPerSecond = span > 0 ? Double(durations.count) / span : 0
        let megabytesPerSecond = span > 0 ? Double(bytes) / 1e6 / span : 0
        let histogram = LatencyBuckets(durations)
        if global.json {
            console.out(JSONLine.encode([
                "saves": durations.count, "bytes": bytes, "saves_per_s": savesPerSecond, "mb_per_s": megabytesPerSecond,
                "latency_us": ["p50": percentile(0.5), "p95": percentile(0.95), "p99": percentile(0.99),
                               "max": durations.last ?? 0, "min": durations.first ?? 0],
                "histogram": histogram.buckets.map { ["le_us": $0.upper, "count": $0.count] },
            ] as [String: Any]))
            return .success
        }
        var text = "\(durations.count) saves, \(Units.bytes(bytes)) over \(Units.duration(microseconds: Int(span * 1e6))): "
            + String(format: "%.1f saves/s, %.1f MB/s\n", savesPerSecond, megabytesPerSecond)
        text += "save latency  min \(Units.duration(microseconds: durations.first ?? 0))  p50 \(Units.duration(microseconds: percentile(0.5)))"
            + "  p95 \(Units.duration(microseconds: percentile(0.95)))  p99 \(Units.duration(microseconds: percentile(0.99)))"
            + "  max \(Units.duration(microseconds: durations.last ?? 0))\n\n"
        text += histogram.text()
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
            return label.padding(toLength: 12, withPad: " ", startingAt: 0) + String(format: "%8d ", bucket.count) + bar
        }.joined(separator: "\n") + "\n"
    }
}

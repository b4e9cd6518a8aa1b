/// What one run (or several) saved and in how much saving time, and the rates from that: the
/// one definition of MB/s — bytes over the saving time (writing, naming and recording the
/// files; not the capture, the encoding or `--interval`'s pauses) — that the summary, `list`,
/// `stats` and the plot all show, so that one run has one figure.
///
/// A run's own figures are its summary's, kept on its row (`runs.saved_count`, `saved_bytes`,
/// `saving_us`): they outlive its files. A run without them (recorded before they were kept,
/// closed by `verify --repair`, still running) has them estimated from its save rows, of any
/// status: its saves, their bytes, and their durations shared among its writers.
struct RunFigures: Equatable {
    var saves = 0
    var bytes = 0
    var savingMicroseconds = 0

    var savingSeconds: Double { Double(savingMicroseconds) / 1e6 }
    var savesPerSecond: Double { savingMicroseconds > 0 ? Double(saves) / savingSeconds : 0 }
    /// The same arithmetic as `SaveProgress.megabytesPerSecond`, so that the figures match to the bit.
    var megabytesPerSecond: Double { savingMicroseconds > 0 ? Double(bytes) / 1e6 / savingSeconds : 0 }

    static func + (a: RunFigures, b: RunFigures) -> RunFigures {
        RunFigures(saves: a.saves.addingSaturated(b.saves), bytes: a.bytes.addingSaturated(b.bytes),
                   savingMicroseconds: a.savingMicroseconds.addingSaturated(b.savingMicroseconds))
    }

    /// The three figures as SQL over `runs r` left-joined to its `saves s` and grouped by run:
    /// the kept ones, or the estimate from the rows. `kept`: the catalog has the columns
    /// (`Catalog.keepsRunTotals`; a catalog opened read-only is not migrated).
    static func sql(kept: Bool) -> (saves: String, bytes: String, savingMicroseconds: String) {
        let rows = (saves: "count(s.id)", bytes: "coalesce(sum(\(Catalog.plausibleBytes)), 0)",
                    saving: "coalesce(sum(\(Catalog.plausibleDuration)), 0) / max(1, count(DISTINCT s.job))")
        guard kept else { return (rows.saves, rows.bytes, rows.saving) }
        return ("coalesce(r.saved_count, \(rows.saves))", "coalesce(r.saved_bytes, \(rows.bytes))",
                "coalesce(r.saving_us, \(rows.saving))")
    }

    /// MB/s as SQL from the columns `sql(kept:)` gives, in the order of operations of
    /// `megabytesPerSecond` (a double the same to the bit); NULL for no saving time.
    static func megabytesPerSecondSQL(bytes: String, savingMicroseconds: String) -> String {
        "CASE WHEN (\(savingMicroseconds)) > 0 THEN CAST((\(bytes)) AS REAL) / 1e6 / (CAST((\(savingMicroseconds)) AS REAL) / 1e6) END"
    }

    /// Each run's figures by id: every run, or only `runID`.
    static func byRun(_ catalog: Catalog, runID: Int? = nil) throws -> [Int: RunFigures] {
        let columns = sql(kept: try catalog.keepsRunTotals())
        let statement = try catalog.database.prepare(
            """
            SELECT r.id, \(columns.saves), \(columns.bytes), \(columns.savingMicroseconds)
            FROM runs r LEFT JOIN captures c ON c.run_id = r.id LEFT JOIN saves s ON s.capture_id = c.id
            \(runID.map { "WHERE r.id = \($0)" } ?? "") GROUP BY r.id
            """)
        var figures: [Int: RunFigures] = [:]
        while try statement.step() {
            figures[statement.int(0)] = RunFigures(
                saves: max(0, statement.int(1)), bytes: max(0, statement.int(2)), savingMicroseconds: max(0, statement.int(3)))
        }
        return figures
    }
}

extension Catalog {
    /// The newest run that saved anything (what `stats` shows by default): read backwards
    /// through the captures' index to the first with a save, so a few rows whatever the
    /// catalog's size.
    func newestRunWithSaves() throws -> Int? {
        try database.prepare("SELECT max(c.run_id) FROM saves s JOIN captures c ON c.id = s.capture_id").firstInt()
    }

    /// Whether the catalog has the run totals' columns (schema step 5): a catalog of an older
    /// camroll that was only read since has not been migrated.
    func keepsRunTotals() throws -> Bool {
        try (database.scalarInt("PRAGMA user_version") ?? 0) >= 5
    }

    /// Whether its saves record the directory they went into (schema step 6).
    func recordsSaveDirectories() throws -> Bool {
        try (database.scalarInt("PRAGMA user_version") ?? 0) >= 6
    }

    /// Whether its thumbnails are in a table of their own (schema step 8), not in the captures' rows.
    func keepsThumbnailsApart() throws -> Bool {
        try (database.scalarInt("PRAGMA user_version") ?? 0) >= 8
    }

    /// Whether its captures record their banner's text (schema step 9).
    func recordsBanners() throws -> Bool {
        try (database.scalarInt("PRAGMA user_version") ?? 0) >= 9
    }
}

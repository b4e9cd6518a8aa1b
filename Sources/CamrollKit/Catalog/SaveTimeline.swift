import FoundationEssentials

/// The saves of one run in time: when each began (from `saves.saved_at`, in milliseconds), how
/// long it took and how many bytes it wrote. What `stats` draws: a stall, an SLC cache running
/// out or a thermal throttle shows as a change over time that percentiles hide.
struct SaveTimeline {
    struct Save {
        /// Seconds from the run's first save to this one's start.
        var start: Double
        var durationMicroseconds: Int
        var bytes: Int
        var end: Double { start + Double(durationMicroseconds) / 1e6 }
    }

    let runID: Int
    /// By start.
    let saves: [Save]
    /// The run's saves, bytes and saving time, as its summary and `stats` give them.
    let figures: RunFigures

    var seconds: Double { saves.map(\.end).max() ?? 0 }
    /// The time the charts span: the run's, but at least the millisecond the catalog's times
    /// are kept in (and never 0, which has no slices).
    var drawnSeconds: Double { max(seconds, 0.001) }

    /// The run `runID`, or the newest run with saves: every save it made, whatever became of its
    /// file since (deleted, replaced), as `stats` counts them.
    init?(catalog: Catalog, runID: Int?) throws {
        guard let run = try runID ?? catalog.newestRunWithSaves() else { return nil }
        let statement = try catalog.database.prepare(
            """
            SELECT s.saved_at, \(Catalog.plausibleDuration), \(Catalog.plausibleBytes), coalesce(s.job, 0) FROM saves s
            JOIN captures c ON c.id = s.capture_id
            WHERE c.run_id = ? ORDER BY s.saved_at, s.seq
            """
        ).bind([.int(run)])
        var saves: [Save] = []
        var first: Double?
        // saved_at is in whole milliseconds, and small files are saved many to a millisecond:
        // taken as it is, a run of 50 that took 595 µs began all at once and was drawn as
        // 1.2 MB over its longest save, 44 µs (63 GB/s). A writer saves one file at a time, so
        // a save begins no sooner than its writer's previous one ended — within its millisecond.
        var writerFreeAt: [Int: Double] = [:]
        while try statement.step() {
            guard let at = Timestamp.seconds(ofISO8601: statement.text(0) ?? "") else { continue }
            first = first ?? at
            let millisecond = at - first!
            let job = statement.int(3)
            let start = min(max(millisecond, writerFreeAt[job] ?? millisecond), millisecond + 0.000_999)
            let save = Save(start: start, durationMicroseconds: statement.int(1), bytes: statement.int(2))
            writerFreeAt[job] = save.end
            saves.append(save)
        }
        guard !saves.isEmpty else { return nil }
        self.runID = run
        self.figures = try RunFigures.byRun(catalog, runID: run)[run] ?? RunFigures()
        self.saves = saves.sorted { $0.start < $1.start }
    }

    /// MB/s in `count` equal slices of the run: the bytes of the saves that ended in each.
    func throughput(slices count: Int) -> [Double] {
        let width = drawnSeconds / Double(count)
        var bytes = [Int](repeating: 0, count: count)
        for save in saves {
            let slice = min(count - 1, Int(save.end / width))
            bytes[slice] = bytes[slice].addingSaturated(save.bytes)
        }
        return bytes.map { Double($0) / 1e6 / width }
    }
}

extension Statement {
    /// The first column of the first row as an integer; nil for no row or NULL.
    func firstInt() throws -> Int? {
        guard try step(), !isNull(0) else { return nil }
        return int(0)
    }
}

/// The throughput over time as a few rows of block characters (▁▂▃▄▅▆▇█), for `stats` in a
/// terminal.
enum ThroughputChart {
    static func text(_ timeline: SaveTimeline, width: Int, height: Int = 6) -> String {
        // The rate of the slices is only known once they are cut, and they are cut to the width
        // the label leaves: the label is as wide as the widest rate ("999.9 MB/s"), and the
        // peak is named in the unit that fits it (a burst of small files can pass 1 GB/s).
        let label = 11
        let columns = max(10, width - label - 1)
        let values = timeline.throughput(slices: columns)
        let top = max(values.max() ?? 0, 0.001)
        let blocks = Array(" ▁▂▃▄▅▆▇█")
        var lines: [String] = []
        for row in (0..<height).reversed() {
            let prefix = row == height - 1 ? Units.bytes(Int(top * 1e6)) + "/s" : row == 0 ? "0" : ""
            var line = prefix.padded(to: label) + "│"
            for value in values {
                // Eighths of a row: how much of this row the value fills.
                let eighths = Int((value / top * Double(height * 8)).rounded()) - row * 8
                line.append(blocks[max(0, min(8, eighths))])
            }
            lines.append(line)
        }
        let end = Units.duration(microseconds: Int(timeline.drawnSeconds * 1e6))
        lines.append(String(repeating: " ", count: label) + "└" + String(repeating: "─", count: columns))
        lines.append(String(repeating: " ", count: label + 1) + "0" + end.leftPadded(to: columns - 1))
        return "throughput over run \(timeline.runID)'s time:\n" + lines.joined(separator: "\n") + "\n"
    }
}

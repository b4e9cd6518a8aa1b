@testable import CamrollKit
import Foundation
import Testing

/// What a person reads: one photo in one line, one MB/s a run wherever it is shown, listings
/// and pictures that fit the screen, a delete that can be tried first.
@Suite struct ReadableOutputTests {
    func snap(_ dir: TemporaryDirectory, _ extra: [String], environment: [String: String] = [:]) throws -> CamrollBinary.Result {
        try CamrollBinary.run(options(["snap", "-d", "pattern", "-r", "320x240", "--db", dir.file("c.sqlite3")], then: extra),
                              environment: environment)
    }

    /// The MB/s figure of a line such as "…: 4310.3 saves/s, 99.5 MB/s".
    func rate(in text: String) -> String? {
        guard let range = text.range(of: #"([0-9]+\.[0-9]) MB/s"#, options: .regularExpression) else { return nil }
        return String(text[range].dropLast(5))
    }

    @Test func onePhotoIsOneLineWithItsPathSizeAndBytes() throws {
        let dir = try TemporaryDirectory()
        let result = try snap(dir, ["-o", dir.file("one.jpg")])
        #expect(result.status == 0, "\(result.stderr)")
        let bytes = try fileBytes(dir.file("one.jpg")).count
        #expect(result.stdout == "saved \(dir.file("one.jpg")) (320x240 JPEG, \(Units.bytes(bytes)))\n", "\(result.stdout)")

        // --stats: the storage figures for one photo too.
        let stats = try snap(dir, ["-o", dir.file("two.jpg"), "--stats"])
        #expect(stats.stdout.hasPrefix("saved 1/1 files, ") && stats.stdout.contains("save latency p50")
                && stats.stdout.contains("run 2 in "), "\(stats.stdout)")
        // More than one save: the figures without asking.
        let many = try snap(dir, ["-n", "2", "-o", dir.file("many/{seq}.jpg")])
        #expect(many.stdout.hasPrefix("saved 2/2 files, ") && many.stdout.contains(" MB/s"), "\(many.stdout)")
        let quiet = try snap(dir, ["-o", dir.file("three.jpg"), "--quiet"])
        #expect(quiet.status == 0 && quiet.stdout.isEmpty && quiet.stderr.isEmpty)
    }

    /// The summary, `stats`, the plot's title and `list` give a run one MB/s — its bytes over its
    /// saving time — and still do once its files are deleted.
    @Test func aRunHasOneRateEverywhereAndKeepsItAfterItsFilesAreDeleted() throws {
        let dir = try TemporaryDirectory()
        let run = try snap(dir, ["-n", "40", "--interval", "1ms", "--frames", "2", "-o", dir.file("out/{seq}.jpg")])
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try #require(rate(in: run.stdout), "\(run.stdout)")

        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT saved_count FROM runs") == 80)
        #expect(try catalog.int("SELECT saved_bytes FROM runs") == catalog.int("SELECT sum(bytes) FROM saves"))
        #expect(try catalog.int("SELECT saving_us FROM runs") > 0)

        func figures() throws -> (stats: String?, plot: String?, list: String?, listJSON: Double?) {
            let stats = try CamrollBinary.run(["stats", "--db", dir.file("c.sqlite3"), "--plot", dir.file("run.svg")])
            #expect(stats.status == 0, "\(stats.stderr)")
            let svg = String(decoding: try fileBytes(dir.file("run.svg")), as: UTF8.self)
            let title = svg.components(separatedBy: "font-weight=\"bold\">").dropFirst().first?.components(separatedBy: "<").first ?? ""
            let list = try CamrollBinary.run(["list", "--db", dir.file("c.sqlite3")])
            let json = try CamrollBinary.run(["list", "--json", "--db", dir.file("c.sqlite3")])
            let runs = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
            let row = list.stdout.split(separator: "\n").dropFirst().first.map(String.init) ?? ""
            // The column before the first file's path.
            let listed = row.split(separator: " ").dropLast().last.map(String.init)
            return (stats.stdout.split(separator: "\n").first.flatMap { rate(in: String($0)) }, rate(in: title), listed,
                    runs?.first?["mb_per_s"] as? Double)
        }
        let before = try figures()
        #expect(before.stats == summary && before.plot == summary && before.list == summary, "\(summary): \(before)")
        #expect(before.listJSON.map { Format.fixed($0, 1) } == summary)

        let delete = try CamrollBinary.run(["delete", "--run", "1", "--db", dir.file("c.sqlite3")])
        #expect(delete.status == 0, "\(delete.stderr)")
        #expect(dir.files(in: "out").isEmpty)
        let after = try figures()
        #expect(after.stats == summary && after.plot == summary && after.list == summary, "\(summary): \(after)")
        let stats = try CamrollBinary.run(["stats", "--run", "1", "--db", dir.file("c.sqlite3")])
        #expect(stats.status == 0 && stats.stdout.hasPrefix("80 saves, "), "\(stats.stdout)\(stats.stderr)")
    }

    /// A catalog of the camroll before the run totals (schema 4) is read as it is, its runs'
    /// rates estimated from their rows; the next snap migrates it, the old run's totals NULL.
    @Test func aCatalogWithoutRunTotalsIsReadAndThenMigrated() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, ["-n", "5", "-o", dir.file("a/{seq}.jpg")]).status == 0)
        try Database(path: dir.file("c.sqlite3")).execute("""
            ALTER TABLE runs DROP COLUMN saved_count; ALTER TABLE runs DROP COLUMN saved_bytes;
            ALTER TABLE runs DROP COLUMN saving_us; ALTER TABLE runs DROP COLUMN every_us;
            ALTER TABLE runs DROP COLUMN skipped_slots; DROP TABLE run_events;
            ALTER TABLE saves DROP COLUMN directory_device; ALTER TABLE saves DROP COLUMN directory_inode;
            ALTER TABLE captures DROP COLUMN banner;
            \(OlderSchema.thumbnailsInCaptures) PRAGMA user_version = 4
            """)
        let list = try CamrollBinary.run(["list", "--json", "--db", dir.file("c.sqlite3")])
        let runs = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]], "\(list.stderr)")
        #expect((runs.first?["mb_per_s"] as? Double ?? 0) > 0)
        let stats = try CamrollBinary.run(["stats", "--db", dir.file("c.sqlite3")])
        #expect(stats.status == 0 && stats.stdout.hasPrefix("5 saves, "), "\(stats.stdout)\(stats.stderr)")
        // Its thumbnails still in the captures' rows, its captures without banners.
        let show = try CamrollBinary.run(["show", "1", "--json", "--db", dir.file("c.sqlite3")])
        #expect(show.status == 0 && show.stdout.contains("\"thumbnail_bytes\""), "\(show.stdout)\(show.stderr)")
        #expect(try CatalogReader(dir.file("c.sqlite3")).int("PRAGMA user_version") == 4)

        #expect(try snap(dir, ["-n", "5", "-o", dir.file("b/{seq}.jpg")]).status == 0)
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("PRAGMA user_version") == Catalog.schemaVersion)
        #expect(try catalog.int("SELECT count(*) FROM runs WHERE saving_us IS NULL") == 1)
        #expect(try catalog.int("SELECT saved_count FROM runs WHERE id = 2") == 5)
    }

    /// A thousand fast saves and one slow one: on a linear scale the slow one's bar was one
    /// character of fifty (and one pixel of the plot's 220); on the log scale it stands out.
    @Test func theHistogramsCountAxisIsLogarithmic() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, ["-r", "64x48", "-n", "1000", "-o", dir.file("out/{seq}.jpg"), "--quiet"]).status == 0)
        try Database(path: dir.file("c.sqlite3")).execute("UPDATE saves SET duration_us = CASE WHEN seq = 500 THEN 5000 ELSE 30 END")
        let stats = try CamrollBinary.run(["stats", "--db", dir.file("c.sqlite3"), "--plot", dir.file("run.svg")])
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(stats.stdout.contains("log scale"))
        let bars = stats.stdout.split(separator: "\n").filter { $0.hasPrefix("≤ ") }
        let slow = try #require(bars.first { $0.contains("8.19 ms") || $0.contains("≤ 8.19") }, "\(bars)")
        let fast = try #require(bars.first { $0.contains(" 999 ") }, "\(bars)")
        #expect(slow.filter { $0 == "█" }.count >= 5 && fast.filter { $0 == "█" }.count == 50, "\(bars)")

        let svg = String(decoding: try fileBytes(dir.file("run.svg")), as: UTF8.self)
        let heights = svg.split(separator: "\n").filter { $0.contains("fill=\"#9467bd\"") }.compactMap { line -> Double? in
            guard let range = line.range(of: #"height="[0-9.]+""#, options: .regularExpression) else { return nil }
            return Double(line[range].dropFirst(8).dropLast())
        }.filter { $0 > 0 }
        #expect(heights.count == 2 && (heights.min() ?? 0) / (heights.max() ?? 1) > 0.05, "\(heights)")
        #expect(svg.contains(">10</text>") && svg.contains(">100</text>") && svg.contains(">999</text>"))
    }

    /// Local time (TZ), kB, the first file, the newest runs that fit the screen; --utc, --bytes,
    /// --all; --json as the catalog has it.
    @Test func listIsForAPersonAndItsJSONForAProgram() throws {
        let dir = try TemporaryDirectory()
        let deep = dir.file("a/rather/long/path/to/the/pictures/of/this/test")
        for index in 1...5 {
            #expect(try snap(dir, ["-o", deep + "/photo-\(index).jpg", "--quiet"]).status == 0)
        }
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        let started = try #require(try catalog.text("SELECT started_at FROM runs WHERE id = 5"))
        let bytes = try catalog.int("SELECT bytes FROM saves WHERE id = 5")
        // Three hours east of UTC, as POSIX writes it.
        let east = ["TZ": "XYZ-3", "COLUMNS": "80", "LINES": "6"]
        let list = try CamrollBinary.run(["list", "--db", dir.file("c.sqlite3")], environment: east)
        #expect(list.status == 0, "\(list.stderr)")
        let lines = list.stdout.split(separator: "\n").map(String.init)
        // The header, three runs (six lines less the header, the note and the prompt), the note.
        #expect(lines.count == 5 && lines[0].hasPrefix("id  started  ") && lines[0].hasSuffix("first file"), "\(list.stdout)")
        #expect(lines.last == "(2 older runs not shown: --all lists every run)")
        let utc = try #require(Timestamp.seconds(ofISO8601: started))
        let local = Timestamp.iso8601(Date(timeIntervalSince1970: utc + 3 * 3600))
        let minute = local.prefix(16).replacing("T", with: " ")
        #expect(lines[1].hasPrefix("5   \(minute)  completed  pattern  1/1    \(Units.bytes(bytes))"), "\(lines[1])")
        #expect(lines.dropLast().allSatisfy { $0.count <= 80 }, "\(list.stdout)")
        #expect(lines[1].hasSuffix("/photo-5.jpg") && lines[1].contains("  …"), "\(lines[1])")

        let raw = try CamrollBinary.run(["list", "--utc", "--bytes", "--all", "--db", dir.file("c.sqlite3")], environment: east)
        let rawLines = raw.stdout.split(separator: "\n").map(String.init)
        #expect(rawLines.count == 6 && rawLines[0].hasPrefix("id  started (UTC)  ") && rawLines[0].contains("  bytes  "))
        #expect(rawLines[1].hasPrefix("5   \(started)  completed  pattern  1/1    \(bytes) "), "\(rawLines[1])")

        let json = try CamrollBinary.run(["list", "--json", "--db", dir.file("c.sqlite3")], environment: east)
        let runs = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(runs.count == 5 && runs[0]["started_at"] as? String == started && runs[0]["bytes"] as? Int == bytes)
        #expect(runs[0]["path"] as? String == deep + "/photo-5.jpg")
        let limited = try CamrollBinary.run(["list", "--limit", "2", "--db", dir.file("c.sqlite3")], environment: east)
        #expect(limited.stdout.split(separator: "\n").count == 3, "\(limited.stdout)")
        let both = try CamrollBinary.run(["list", "--all", "--limit", "2", "--db", dir.file("c.sqlite3")])
        #expect(both.status == 64 && both.stderr.hasPrefix("camroll: error: '--all' and '--limit' cannot be used together\n"))

        // A run's saves: local times and kB too.
        let saves = try CamrollBinary.run(["list", "--run", "5", "--db", dir.file("c.sqlite3")], environment: east)
        #expect(saves.stdout.contains(Units.bytes(bytes)) && saves.stdout.contains(local.prefix(19).replacing("T", with: " ")),
                "\(saves.stdout)")
    }

    /// In a screen of 60x20: every line of the rows no wider, the picture no taller than 19 rows.
    @Test func showFitsTheScreenBothWays() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, ["-r", "640x480", "-o", dir.file("a-photo-with-a-name-long-enough-to-be-cut.jpg")]).status == 0)
        let screen = ["COLUMNS": "60", "LINES": "20"]
        let show = try CamrollBinary.run(["show", "last", "--preview-mode", "symbols", "--db", dir.file("c.sqlite3")], environment: screen)
        #expect(show.status == 0, "\(show.stderr)")
        let lines = show.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let picture = lines.filter { $0.contains("█") || $0.contains("▀") || $0.contains("▄") }
        #expect(!picture.isEmpty && picture.count <= 19, "\(picture.count) rows")
        #expect(lines.allSatisfy { $0.count <= 60 }, "\(lines.filter { $0.count > 60 })")
        #expect(show.stdout.contains("  output_template:  …") && show.stdout.contains("long-enough-to-be-cut.jpg"))
        #expect(show.stdout.contains("captures\nid  captured "))
    }

    @Test func deleteDryRunListsWhatWouldGoAndDeletesNothing() throws {
        let dir = try TemporaryDirectory()
        #expect(try snap(dir, ["-n", "3", "-o", dir.file("out/{seq}.jpg"), "--quiet"]).status == 0)
        let changed = try FileHandle(forWritingTo: URL(fileURLWithPath: dir.file("out/2.jpg")))
        changed.seekToEndOfFile()
        changed.write(Data([0]))
        try changed.close()
        let before = try CatalogReader(dir.file("c.sqlite3")).rows("SELECT id, status FROM saves ORDER BY id", columns: 2)
        let dry = try CamrollBinary.run(["delete", "--run", "1", "--dry-run", "--db", dir.file("c.sqlite3")])
        #expect(dry.status == 0, "\(dry.stderr)")
        let bytes = try fileBytes(dir.file("out/1.jpg")).count
        #expect(dry.stdout == """
            would delete \(dir.file("out/1.jpg"))
            would keep \(dir.file("out/2.jpg")): no longer matches its recorded content
            would delete \(dir.file("out/3.jpg"))
            dry run: would delete 2 file(s), \(Units.bytes(2 * bytes)); nothing was deleted; 1 would be kept (use --force to delete them)

            """, "\(dry.stdout)")
        #expect(dir.files(in: "out").count == 3)
        #expect(try CatalogReader(dir.file("c.sqlite3")).rows("SELECT id, status FROM saves ORDER BY id", columns: 2) == before)
        let forced = try CamrollBinary.run(["delete", "--run", "1", "--dry-run", "--force", "--db", dir.file("c.sqlite3")])
        #expect(forced.stdout.contains("would delete 3 file(s)"), "\(forced.stdout)")
        #expect(dir.files(in: "out").count == 3)
    }
}

import CamrollKit
import Foundation
import Testing

/// A catalog grows for years (half a million rows a year at a photo a minute; ten million for a
/// storage tester), and a command about one run must cost that run, not the catalog. Checked
/// where it is decided, in the query plans: every statement each command prepares
/// (`CAMROLL_TRACE_SQL=1`) through `EXPLAIN QUERY PLAN`, and no full scan of `saves` or
/// `captures` on any path but those that read everything (`verify` of the whole catalog,
/// `list --all`, `stats --all`). make bench-catalog measures the times on 1 M and 10 M saves.
@Suite struct CatalogScaleTests {
    /// The statements `arguments` prepared, one each, in the order first prepared.
    func statements(_ arguments: [String], _ dir: TemporaryDirectory) throws -> [String] {
        let result = try CamrollBinary.run(arguments + ["--db", dir.file("c.sqlite3")], environment: ["CAMROLL_TRACE_SQL": "1"])
        #expect([0, 1].contains(result.status), "\(arguments): \(result.stderr)")
        var seen: [String] = []
        for line in result.stderr.split(separator: "\n") where line.hasPrefix("trace: sql: ") {
            let sql = String(line.dropFirst("trace: sql: ".count))
            if !seen.contains(sql) { seen.append(sql) }
        }
        return seen
    }

    /// The plan's lines that read `saves` or `captures` whole (a SCAN of either, by name or by
    /// the alias the statement gives it), and any sort of rows that `list --run` streams.
    func fullScans(_ sql: String, in database: Database) throws -> [String] {
        guard ["SELECT", "WITH", "UPDATE", "DELETE", "INSERT"].contains(where: { sql.uppercased().hasPrefix($0) }) else { return [] }
        var names: Set<String> = ["saves", "captures"]
        let words = sql.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" }).map(String.init)
        for (index, word) in words.enumerated() where ["saves", "captures"].contains(word) && index + 1 < words.count {
            let next = words[index + 1].uppercased() == "AS" && index + 2 < words.count ? words[index + 2] : words[index + 1]
            names.insert(next)
        }
        let plan = try database.prepare("EXPLAIN QUERY PLAN " + sql)
        var found: [String] = []
        while try plan.step() {
            let detail = plan.text(3) ?? ""
            let parts = detail.split(separator: " ")
            if parts.count >= 2, parts[0] == "SCAN", names.contains(String(parts[1])) { found.append(detail) }
        }
        return found
    }

    @Test func noCommandAboutOneRunReadsTheWholeCatalog() throws {
        let dir = try TemporaryDirectory()
        // Runs of every kind: several frames, two writers, a delete, a fill's worth of saves.
        for extra in [["-n", "40", "--frames", "2"], ["-n", "30", "--jobs", "2"], ["-n", "20", "--stamp"]] {
            let run = try CamrollBinary.run(["snap", "-d", "pattern", "-r", "64x48", "-o", dir.file("out/{run}/{seq}.jpg"),
                                             "--db", dir.file("c.sqlite3")] + extra)
            #expect(run.status == 0, "\(run.stderr)")
        }
        let reader = try CatalogReader(dir.file("c.sqlite3"))
        let path = try #require(try reader.text("SELECT path FROM saves WHERE id = 45"))
        let commands: [[String]] = [
            ["list"], ["list", "--run", "2"], ["list", "--run", "2", "--csv"], ["list", "--limit", "2"],
            ["show", "2"], ["show", "last"], ["show", "--capture", "1"],
            ["stats"], ["stats", "--run", "1"], ["stats", "--run", "2", "--plot", dir.file("p.svg")],
            ["verify", "--run", "2"], ["verify", path], ["verify", "--repair", "--run", "1"],
            ["delete", "--run", "3", "--dry-run"], ["delete", "--save", "3", "--force"], ["delete", "--run", "3"],
            ["snap", "-d", "pattern", "-r", "64x48", "-n", "5", "-o", dir.file("more/{seq}.jpg")],
        ]
        var checked = 0
        for command in commands {
            for sql in try statements(command, dir) {
                checked += 1
                let scans = try fullScans(sql, in: reader.database)
                #expect(scans.isEmpty, "\(command.joined(separator: " ")): \(scans) in \(sql)")
            }
        }
        #expect(checked > 40, "only \(checked) statements were traced")
        // What reads everything does read everything: the check finds scans where they are.
        let everything = try statements(["stats", "--all"], dir)
        #expect(try everything.contains { try !fullScans($0, in: reader.database).isEmpty })
    }

    /// `list --run` streams: its rows come in the indexes' order, never sorted first (a sort of a
    /// run of millions of saves reads them all before the first line).
    @Test func aRunsSavesAreListedWithoutASort() throws {
        let dir = try TemporaryDirectory()
        let run = try CamrollBinary.run(["snap", "-d", "pattern", "-r", "64x48", "-n", "10", "--frames", "3",
                                         "-o", dir.file("out/{frame}-{seq}.jpg"), "--db", dir.file("c.sqlite3")])
        #expect(run.status == 0, "\(run.stderr)")
        let reader = try CatalogReader(dir.file("c.sqlite3"))
        let listing = try statements(["list", "--run", "1"], dir).filter { $0.contains("FROM saves s") && $0.contains("ORDER BY") }
        #expect(!listing.isEmpty, "\(listing)")
        for sql in listing {
            let plan = try reader.database.prepare("EXPLAIN QUERY PLAN " + sql)
            while try plan.step() {
                #expect(!(plan.text(3) ?? "").contains("TEMP B-TREE"), "\(plan.text(3) ?? "") in \(sql)")
            }
        }
        // Frame by frame, in the order saved.
        let listed = try CamrollBinary.run(["list", "--run", "1", "--csv", "--db", dir.file("c.sqlite3")])
        let ids = listed.stdout.split(separator: "\n").dropFirst().compactMap { Int($0.split(separator: ",")[0]) }
        #expect(ids.count == 30 && ids == ids.sorted(), "\(ids)")
    }
}

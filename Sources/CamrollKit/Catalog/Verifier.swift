import FoundationEssentials
import Glibc

/// `camroll verify`: reads every saved file back, past the page cache, and compares its size
/// and XXH3-128 with the catalog — like f3, but for the files camroll itself wrote.
public final class Verifier {
    public enum Outcome: String, Sendable, CaseIterable {
        case ok, corrupt, missing
        /// The file holds another save's content: a write that landed in the wrong place
        /// (wrap-around on a fake-capacity card). Only detectable when copies differ (`--stamp`).
        case aliased
    }

    public struct Problem: Sendable {
        public var saveID: Int
        public var path: String
        public var outcome: Outcome
        public var detail: String
    }

    public struct Report: Sendable {
        public var counts: [Outcome: Int] = [:]
        public var problems: [Problem] = []
        public var bytesRead = 0
        public var elapsedMicroseconds = 0
        public var repair: Repair.Result?
        public var cancelled = false
        /// Paths asked for that the catalog has no save of: nothing was checked for them.
        public var unknownPaths: [String] = []

        public var checked: Int { counts.values.reduce(0, +) }
        public var allOK: Bool { checked == (counts[.ok] ?? 0) && unknownPaths.isEmpty }
    }

    public enum Selection: Sendable {
        case all
        case run(Int)
        case paths([String])
    }

    private let catalog: Catalog
    private let cancellation: Cancellation?
    private let progress: ((Int, Int, Int) -> Void)?

    /// `progress(done, total, bytesRead)` is called after every file.
    public init(catalog: Catalog, cancellation: Cancellation? = nil, progress: ((Int, Int, Int) -> Void)? = nil) {
        self.catalog = catalog
        self.cancellation = cancellation
        self.progress = progress
    }

    struct Row {
        var id: Int
        var path: String
        var bytes: Int
        var hash: String
        var status: String
    }

    public func verify(_ selection: Selection, repair: Bool) throws -> Report {
        var report = Report()
        let begin = monotonicMicroseconds()
        // A catalog whose pages are damaged cannot vouch for anything read from it.
        let integrity = try catalog.userErrors { try catalog.database.scalarText("PRAGMA quick_check") } ?? ""
        guard integrity == "ok" else {
            throw CamrollError(
                .dataError, "catalog \(catalog.path) is corrupt: \(integrity.split(separator: "\n").first ?? "")",
                hint: "Its files may still be checked with 'xxhsum -H2 -c' from a copy of the rows that can be read.")
        }
        if repair { report.repair = try Repair(catalog: catalog).run(selection) }
        let rows = try catalog.userErrors { try self.rows(selection) }
        if case .paths(let paths) = selection {
            let known = Set(rows.map(\.path))
            report.unknownPaths = paths.map { AbsolutePath.resolve($0) }.filter { !known.contains($0) }
        }
        // Pages still dirty from the saving cannot be dropped from the cache; written out first,
        // every page can, and each file is then read from the device.
        sync()
        var pathOfHash: [String: String] = [:]
        for row in rows { pathOfHash[row.hash] = row.path }

        var newStatus: [(Int, String)] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        for (index, row) in rows.enumerated() {
            if cancellation?.isCancelled == true {
                report.cancelled = true
                break
            }
            let outcome: Outcome
            var detail = ""
            switch Self.readFile(row.path, buffer: &buffer) {
            case .failure(.missing):
                outcome = .missing
                detail = "missing"
            case .failure(let problem):
                outcome = .corrupt
                detail = problem.detail
            case .success(let (size, hash)):
                report.bytesRead += size
                if size == row.bytes && hash == row.hash {
                    outcome = .ok
                } else if let other = pathOfHash[hash], other != row.path {
                    outcome = .aliased
                    detail = "holds the content of \(other)"
                } else {
                    outcome = .corrupt
                    detail = size == row.bytes ? "content differs" : "\(size) bytes, expected \(row.bytes)"
                }
            }
            report.counts[outcome, default: 0] += 1
            if outcome != .ok {
                report.problems.append(Problem(saveID: row.id, path: row.path, outcome: outcome, detail: detail))
            }
            let status = outcome == .ok ? "saved" : outcome == .missing ? "missing" : "corrupt"
            if status != row.status { newStatus.append((row.id, status)) }
            progress?(index + 1, rows.count, report.bytesRead)
        }
        if repair && !newStatus.isEmpty {
            try catalog.userErrors {
                try catalog.database.transaction {
                    let update = try catalog.database.prepare("UPDATE saves SET status = ? WHERE id = ?")
                    for (id, status) in newStatus { try update.bind(.text(status), .int(id)).run() }
                }
            }
            report.repair?.rowsMarked = newStatus.count
        }
        report.elapsedMicroseconds = monotonicMicroseconds() - begin
        return report
    }

    private func rows(_ selection: Selection) throws -> [Row] {
        var sql = "SELECT s.id, s.path, s.bytes, s.xxh128, s.status FROM saves s JOIN captures c ON c.id = s.capture_id WHERE s.status IN ('saved', 'missing', 'corrupt')"
        var values: [SQLValue] = []
        switch selection {
        case .all: break
        case .run(let id):
            sql += " AND c.run_id = ?"
            values = [.int(id)]
        case .paths(let paths):
            sql += " AND s.path IN (" + paths.map { _ in "?" }.joined(separator: ",") + ")"
            values = paths.map { .text(AbsolutePath.resolve($0)) }
        }
        let statement = try catalog.database.prepare(sql + " ORDER BY s.id").bind(values)
        var rows: [Row] = []
        while try statement.step() {
            rows.append(Row(id: statement.int(0), path: statement.text(1) ?? "", bytes: statement.int(2),
                            hash: statement.text(3) ?? "", status: statement.text(4) ?? ""))
        }
        return rows
    }

    /// Size and XXH3-128 of a file, read after dropping its cached pages so the bytes come
    /// from the device, not from memory. Only a regular file is read (`RegularFile.open`).
    static func readFile(_ path: String, buffer: inout [UInt8]) -> Result<(Int, String), RegularFile.Problem> {
        let fd: Int32
        switch RegularFile.open(path) {
        case .failure(let problem): return .failure(problem)
        case .success(let opened): fd = opened
        }
        defer { close(fd) }
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
        let hasher = XXH128.Streaming()
        var total = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(.system(SystemError("read", path: path)))
            }
            if count == 0 { break }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            total += count
        }
        return .success((total, hasher.hex()))
    }
}

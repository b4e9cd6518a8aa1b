import CSQLite
import FoundationEssentials
import Glibc

/// A query's result, for printing as aligned text, CSV or JSON.
struct Table {
    enum Value {
        case null
        case int(Int)
        case double(Double)
        case text(String)

        var display: String {
            switch self {
            case .null: ""
            case .int(let v): String(v)
            case .double(let v): String(v)
            case .text(let v): v.printable
            }
        }

        var json: Any {
            switch self {
            case .null: JSONNull.null
            case .int(let v): v
            case .double(let v): v
            case .text(let v): v
            }
        }
    }

    var columns: [String]
    var rows: [[Value]]

    static func query(_ database: Database, _ sql: String) throws -> Table {
        let statement = try database.prepare(sql)
        var rows: [[Value]] = []
        while try statement.step() {
            rows.append((0..<statement.columnCount).map { statement.value($0) })
        }
        return Table(columns: (0..<statement.columnCount).map { statement.columnName($0) }, rows: rows)
    }

    func objects() -> [[String: Any]] {
        rows.map { row in Dictionary(uniqueKeysWithValues: zip(columns, row.map(\.json))) }
    }

    /// RFC 4180: fields with commas, quotes or line breaks are quoted, quotes doubled.
    func csv() -> String {
        ([columns] + rows.map { $0.map(\.display) }).map(Table.csvLine).joined()
    }

    /// Columns padded to their widest value.
    func text() -> String {
        guard !rows.isEmpty else { return "(none)\n" }
        let cells = [columns] + rows.map { $0.map(\.display) }
        let widths = columns.indices.map { column in cells.map { $0[column].count }.max() ?? 0 }
        return cells.map { Table.textLine($0, widths: widths) }.joined()
    }

    enum Format { case text, csv, json }

    /// Prints a query's rows as `text()`, `csv()` or a JSON array of `objects()` would, byte for
    /// byte, but as they come and in chunks: a listing of one run's two million saves takes the
    /// memory of one chunk, not of all the rows (2.3 GB before). Text is aligned to the first
    /// `alignedRows` rows (all of them in a listing no longer than that, as `text()` aligns)
    /// and to the last row, which `lastRow` reads (the query in reverse, LIMIT 1), in one read
    /// transaction. Stops when `out` says the reader has gone (`camroll list | head`).
    ///
    /// For text, a person's: each row's values as `shown` makes them (local times, sizes in kB,
    /// two columns in one), under `headers` (one for each value it gives) instead of the
    /// columns' names, and the last column (a path) cut from the left, with "…", so that the
    /// lines fit `width`.
    static let alignedRows = 1000

    static func stream(
        _ database: Database, _ sql: String, as format: Format, headers: [String]? = nil,
        shown: (([Value]) -> [Value])? = nil, width lineWidth: Int? = nil, lastRow lastRowSQL: String? = nil,
        to out: (String) -> Bool
    ) throws {
        try database.execute("BEGIN")
        defer { try? database.execute("COMMIT") }
        let statement = try database.prepare(sql)
        let columns = (0..<statement.columnCount).map { statement.columnName($0) }
        let person = format == .text
        func row() -> [Value] {
            let values = (0..<statement.columnCount).map { statement.value($0) }
            return person ? shown?(values) ?? values : values
        }
        let names = person ? headers ?? columns : columns
        var widths = names.map(width)
        // Text is aligned to the first `alignedRows` rows, held back until they are read; a
        // later cell wider than its column widens it from that row on. So the first line of a
        // run of millions of saves is out as soon as those rows are read, not after all of them.
        var heldBack: [[Value]] = []
        var more = true
        if format == .text {
            while heldBack.count < alignedRows, more {
                more = try statement.step()
                guard more else { break }
                let values = row()
                for (column, value) in values.enumerated() { widths[column] = max(widths[column], width(value.display)) }
                heldBack.append(values)
            }
            guard !heldBack.isEmpty else { _ = out("(none)\n"); return }
            // The last row (its numbers the longest, as a rule) read at once by `lastRowSQL`,
            // the query in reverse order, so that the columns rarely need to widen later.
            if more, let lastRowSQL {
                let last = try database.prepare(lastRowSQL)
                if try last.step() {
                    let values = (0..<last.columnCount).map { last.value($0) }
                    for (column, value) in (shown?(values) ?? values).enumerated() where column < widths.count {
                        widths[column] = max(widths[column], width(value.display))
                    }
                }
            }
        }
        // What the last column has left of the line (never less than a short name's room).
        let lastRoom = lineWidth.map { max(10, $0 - widths.dropLast().reduce(0, +) - 2 * (names.count - 1)) }
        func fitted(_ cells: [String]) -> [String] {
            guard let lastRoom, let last = cells.last, width(last) > lastRoom else { return cells }
            return cells.dropLast() + ["…" + String(last.suffix(lastRoom - 1))]
        }
        // JSON objects' keys in order, as JSONLine writes them.
        let keyOrder = columns.indices.sorted { columns[$0] < columns[$1] }
        let keys = keyOrder.map { String(JSONLine.encode(columns[$0]).dropLast()) + ":" }
        var chunk = ""
        func add(_ text: String) -> Bool {
            chunk += text
            guard chunk.utf8.count >= 1 << 16 else { return true }
            defer { chunk = "" }
            return out(chunk)
        }
        var going: Bool
        switch format {
        case .text: going = add(textLine(names, widths: widths))
        case .csv: going = add(csvLine(columns))
        case .json: going = add("[")
        }
        var first = true
        var held = heldBack.makeIterator()
        func next() throws -> [Value]? {
            if let values = held.next() { return values }
            return try more && statement.step() ? row() : nil
        }
        while going, let values = try next() {
            switch format {
            case .text:
                let cells = fitted(values.map(\.display))
                for (column, cell) in cells.enumerated().dropLast() { widths[column] = max(widths[column], width(cell)) }
                going = add(textLine(cells, widths: widths))
            case .csv: going = add(csvLine(values.map(\.display)))
            case .json:
                var object = first ? "{" : ",{"
                for (index, column) in keyOrder.enumerated() {
                    if index > 0 { object += "," }
                    object += keys[index]
                    object += JSONLine.encode(values[column].json).dropLast()
                }
                going = add(object + "}")
            }
            first = false
        }
        if going { _ = out(chunk + (format == .json ? "]\n" : "")) }
    }

    /// Characters, as `count` gives them, without walking the text by grapheme where it is all ASCII.
    private static func width(_ text: String) -> Int {
        text.utf8.allSatisfy { $0 < 0x80 } ? text.utf8.count : text.count
    }

    private static func textLine(_ cells: [String], widths: [Int]) -> String {
        var line = ""
        for (column, cell) in cells.enumerated() {
            if column > 0 { line += "  " }
            line += cell
            // The last column is not padded: a line ends at its text.
            if column < cells.count - 1 { line += String(repeating: " ", count: widths[column] - width(cell)) }
        }
        return line.trimmed() + "\n"
    }

    /// RFC 4180: fields with commas, quotes or line breaks are quoted, quotes doubled.
    private static func csvLine(_ cells: [String]) -> String {
        func field(_ text: String) -> String {
            text.utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 10 || $0 == 13 }
                ? "\"" + text.replacing("\"", with: "\"\"") + "\"" : text
        }
        return cells.map(field).joined(separator: ",") + "\n"
    }

    /// One row as `name: value` lines.
    func vertical() -> String {
        guard let row = rows.first else { return "" }
        let width = columns.map(\.count).max() ?? 0
        return zip(columns, row).map { "  " + ($0 + ":").padded(to: width + 1) + " " + $1.display }
            .joined(separator: "\n") + "\n"
    }
}

extension Statement {
    var columnCount: Int32 { sqlite3_column_count(handle) }
    func columnName(_ column: Int32) -> String { String(cString: sqlite3_column_name(handle, column)) }

    func value(_ column: Int32) -> Table.Value {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: .int(int(column))
        case SQLITE_FLOAT: .double(double(column))
        case SQLITE_NULL: .null
        case SQLITE_BLOB: .text("<\(sqlite3_column_bytes(handle, column)) bytes>")
        default: .text(text(column) ?? "")
        }
    }

    /// Steps once; the first column as an integer, or nil when there is no row.
    func stepInt() throws -> Int? { try step() ? int(0) : nil }
}

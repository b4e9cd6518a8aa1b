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
            case .text(let v): v
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
        func field(_ text: String) -> String {
            text.contains(where: { ",\"\n\r".contains($0) }) ? "\"" + text.replacing("\"", with: "\"\"") + "\"" : text
        }
        return ([columns.map(field).joined(separator: ",")] + rows.map { $0.map { field($0.display) }.joined(separator: ",") })
            .joined(separator: "\n") + "\n"
    }

    /// Columns padded to their widest value.
    func text() -> String {
        guard !rows.isEmpty else { return "(none)\n" }
        let cells = [columns] + rows.map { $0.map(\.display) }
        let widths = columns.indices.map { column in cells.map { $0[column].count }.max() ?? 0 }
        return cells.map { row in
            row.enumerated().map { $1.padded(to: widths[$0]) }
                .joined(separator: "  ").trimmed()
        }.joined(separator: "\n") + "\n"
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

import CSQLite
import Glibc

/// A failed SQLite call: result code, SQLite's message and the statement it was running.
public struct DatabaseError: Error, CustomStringConvertible, Sendable {
    public let code: Int32
    public let message: String
    public let sql: String?
    /// The errno of the system call that failed under SQLite, or 0: SQLite's own message for
    /// an open that failed is "unable to open database file", whatever the reason.
    public var systemErrno: Int32 = 0

    public var primaryCode: Int32 { code & 0xff }

    /// The file system had no room: SQLite's own "database or disk is full", or a system call
    /// under it refused for space (making the WAL index, `-shm`, is an I/O error to SQLite).
    public var isNoSpace: Bool {
        primaryCode == SQLITE_FULL || (primaryCode == SQLITE_IOERR && (systemErrno == ENOSPC || systemErrno == EDQUOT))
    }
    public var description: String { message }

    /// The message, with the system's reason where there is one: "unable to open database file
    /// (Read-only file system)".
    public var messageWithReason: String {
        systemErrno == 0 ? message : "\(message) (\(String(cString: strerror(systemErrno))))"
    }
}

/// One SQLite connection. Every C call's result goes through `check`.
public final class Database {
    let handle: OpaquePointer
    public let path: String

    /// Opens (creating if needed) the database at `path`.
    public init(path: String, readOnly: Bool = false) throws {
        let flags = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        handle = try Self.open(path, flags: flags)
        self.path = path
    }

    /// Opens an SQLite URI (`file:PATH?mode=ro…`), read-only.
    public init(uri: String) throws {
        handle = try Self.open(uri, flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_URI)
        self.path = uri
    }

    /// Settings SQLite takes only before its first use (once per process).
    private static let configured: Void = { _ = csqlite_disable_memory_statistics() }()

    private static func open(_ name: String, flags: Int32) throws -> OpaquePointer {
        _ = configured
        var connection: OpaquePointer?
        let status = sqlite3_open_v2(name, &connection, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let connection else {
            let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            let systemErrno = connection.map { sqlite3_system_errno($0) } ?? 0
            sqlite3_close_v2(connection)
            throw DatabaseError(code: status, message: message, sql: nil, systemErrno: systemErrno)
        }
        sqlite3_extended_result_codes(connection, 1)
        return connection
    }

    deinit { sqlite3_close_v2(handle) }

    /// The rows the last INSERT, UPDATE or DELETE changed.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// Waits this long for another process's lock before failing with SQLITE_BUSY.
    public func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    @discardableResult
    func check(_ status: Int32, sql: String? = nil) throws -> Int32 {
        switch status {
        case SQLITE_OK, SQLITE_ROW, SQLITE_DONE: return status
        default:
            throw DatabaseError(
                code: status, message: String(cString: sqlite3_errmsg(handle)), sql: sql, systemErrno: sqlite3_system_errno(handle))
        }
    }

    /// Runs one or more statements that return nothing of interest.
    public func execute(_ sql: String) throws {
        try check(sqlite3_exec(handle, sql, nil, nil, nil), sql: sql)
    }

    public func prepare(_ sql: String) throws -> Statement {
        try Statement(database: self, sql: sql)
    }

    /// The first column of the first row, as text (`PRAGMA journal_mode=WAL` → "wal").
    public func scalarText(_ sql: String) throws -> String? {
        let statement = try prepare(sql)
        return try statement.step() ? statement.text(0) : nil
    }

    public func scalarInt(_ sql: String) throws -> Int? {
        let statement = try prepare(sql)
        return try statement.step() ? statement.int(0) : nil
    }

    public var lastInsertRowID: Int { Int(sqlite3_last_insert_rowid(handle)) }

    /// Runs `body` in `BEGIN IMMEDIATE … COMMIT`; rolls back and rethrows the first error.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}

/// A prepared statement, finalized when released.
public final class Statement {
    private let database: Database
    let handle: OpaquePointer
    public let sql: String

    init(database: Database, sql: String) throws {
        Trace.statement(sql)
        var statement: OpaquePointer?
        try database.check(sqlite3_prepare_v2(database.handle, sql, -1, &statement, nil), sql: sql)
        guard let statement else {
            throw DatabaseError(code: SQLITE_MISUSE, message: "empty statement", sql: sql)
        }
        self.database = database
        self.handle = statement
        self.sql = sql
    }

    /// The bytes of the texts bound now, end to end, which SQLite reads where they are
    /// (SQLITE_STATIC) until the next `bind`, instead of copying each into an allocation of its
    /// own and freeing it (the catalog's thread binds three texts a save row).
    private var boundTexts = UnsafeMutableRawBufferPointer(start: nil, count: 0)

    deinit {
        sqlite3_finalize(handle)
        boundTexts.deallocate()
    }

    /// Binds values to ?1, ?2, … in order, after resetting the statement.
    @discardableResult
    public func bind(_ values: SQLValue...) throws -> Statement {
        try bind(values)
    }

    @discardableResult
    public func bind(_ values: [SQLValue]) throws -> Statement {
        sqlite3_reset(handle)
        // One byte more a text, so that an empty one has an address too (a null one binds NULL).
        var textBytes = 0
        for case .text(let text) in values { textBytes += text.utf8.count + 1 }
        if textBytes > boundTexts.count {
            // Nothing may be left bound to the buffer that goes.
            sqlite3_clear_bindings(handle)
            boundTexts.deallocate()
            boundTexts = .allocate(byteCount: max(textBytes, 2 * boundTexts.count, 256), alignment: 1)
        } else if values.count < sqlite3_bind_parameter_count(handle) {
            // Values of an earlier run left in parameters this one does not set would be used again.
            sqlite3_clear_bindings(handle)
        }
        var textOffset = 0
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .null: status = sqlite3_bind_null(handle, index)
            case .int(let v): status = sqlite3_bind_int64(handle, index, Int64(v))
            case .double(let v): status = sqlite3_bind_double(handle, index, v)
            case .text(let v):
                let start = boundTexts.baseAddress! + textOffset
                let count = v.utf8.count
                if count > 0, v.utf8.withContiguousStorageIfAvailable({ start.copyMemory(from: $0.baseAddress!, byteCount: count) }) == nil {
                    for (position, byte) in v.utf8.enumerated() { start.storeBytes(of: byte, toByteOffset: position, as: UInt8.self) }
                }
                textOffset += count + 1
                // A nil destructor is SQLITE_STATIC: SQLite reads the bytes where they are.
                status = sqlite3_bind_text(handle, index, start.assumingMemoryBound(to: CChar.self), Int32(count), nil)
            case .blob(let v):
                status = v.withUnsafeBytes {
                    sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), csqlite_transient())
                }
            }
            try database.check(status, sql: sql)
        }
        return self
    }

    /// Advances to the next row; false when there are no more.
    @discardableResult
    public func step() throws -> Bool {
        try database.check(sqlite3_step(handle), sql: sql) == SQLITE_ROW
    }

    /// Ends a reading left part-way, so that the statement holds no read transaction (in WAL
    /// mode, a snapshot that would keep this connection from writing after another has).
    public func reset() { sqlite3_reset(handle) }

    /// Steps to completion, for statements that return no rows.
    public func run() throws {
        while try step() {}
    }

    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    public func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }
    public func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    public func text(_ column: Int32) -> String? {
        sqlite3_column_text(handle, column).map { String(cString: $0) }
    }
    public func blob(_ column: Int32) -> [UInt8]? {
        guard let bytes = sqlite3_column_blob(handle, column) else { return nil }
        return Array(UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, column))))
    }
}

public enum SQLValue: Sendable {
    case null
    case int(Int)
    case double(Double)
    case text(String)
    case blob([UInt8])

    public static func optional(_ value: Int?) -> SQLValue { value.map { .int($0) } ?? .null }
    public static func optional(_ value: String?) -> SQLValue { value.map { .text($0) } ?? .null }
}

import Glibc

/// `CAMROLL_TRACE=1`: when each phase of a command ended, counted from the moment the kernel
/// started the process, printed to stderr as the process exits. What it is for: seeing where the
/// time to the first JPEG goes (loading, runtime start-up, catalog, camera, frame, encoding,
/// writing, rows) on a real machine or a VM, without a profiler.
public enum Trace {
    public static let enabled = getenv("CAMROLL_TRACE").map { String(cString: $0) == "1" } ?? false
    private static let marks = Locked<[(phase: String, microseconds: Int)]>([])

    /// Records that `phase` has just ended.
    @inline(__always)
    public static func mark(_ phase: @autoclosure () -> String) {
        guard enabled else { return }
        let now = bootMicroseconds()
        let name = phase()
        marks.withLock { $0.append((name, now)) }
    }

    /// `CAMROLL_TRACE_SQL=1`: every SQL statement camroll prepares, on stderr as it is prepared
    /// (`trace: sql: …`, one line), so that each command's queries can be read and their plans
    /// checked (`EXPLAIN QUERY PLAN`: make catalog-scale).
    public static let statementsEnabled = getenv("CAMROLL_TRACE_SQL").map { String(cString: $0) == "1" } ?? false

    @inline(__always)
    static func statement(_ sql: String) {
        guard statementsEnabled else { return }
        let line = "trace: sql: " + sql.split(whereSeparator: \.isWhitespace).joined(separator: " ") + "\n"
        _ = line.utf8CString.withUnsafeBufferPointer { write(STDERR_FILENO, $0.baseAddress, $0.count - 1) }
    }

    /// The table of phases: each one's end and duration, in milliseconds since the process began.
    public static func report() {
        guard enabled else { return }
        mark("exit")
        let start = processStartMicroseconds()
        var previous = start
        var text = "trace: phase                           ends at (ms)   took (ms)\n"
        text += "trace: (process started)                       0.000\n"
        for (phase, time) in marks.withLock({ $0 }) {
            let name = phase.count < 32 ? phase + String(repeating: " ", count: 32 - phase.count) : phase
            text += "trace: \(name) \(format(time - start)) \(format(time - previous))\n"
            previous = time
        }
        _ = text.printableLines.utf8CString.withUnsafeBufferPointer { write(STDERR_FILENO, $0.baseAddress, $0.count - 1) }
    }

    /// Milliseconds to the microsecond: a small frame's encoding takes well under one.
    private static func format(_ microseconds: Int) -> String {
        let fraction = String(abs(microseconds % 1000))
        let text = "\(microseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
        return String(repeating: " ", count: max(0, 12 - text.count)) + text
    }

    private static func bootMicroseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return Int(now.tv_sec) * 1_000_000 + Int(now.tv_nsec) / 1000
    }

    /// When the kernel started this process (field 22 of /proc/self/stat, in clock ticks since
    /// boot: 10 ms resolution), on the CLOCK_BOOTTIME scale.
    private static func processStartMicroseconds() -> Int {
        guard let file = fopen("/proc/self/stat", "r") else { return bootMicroseconds() }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 1024)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return bootMicroseconds() }
        let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // After the command name in parentheses (which may hold spaces), fields 3 onwards.
        guard let close = line.lastIndex(of: ")") else { return bootMicroseconds() }
        let fields = line[line.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = Int(fields[19]) else { return bootMicroseconds() }
        return ticks * 1_000_000 / sysconf(Int32(_SC_CLK_TCK))
    }
}

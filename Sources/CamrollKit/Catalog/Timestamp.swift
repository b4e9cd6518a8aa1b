import Foundation
import Glibc

/// Times as the catalog stores them: ISO-8601, UTC, milliseconds (`2026-12-02T16:30:05.123Z`).
/// Formatted by hand with gmtime_r: it runs once per save, and DateFormatter is slow.
public enum Timestamp {
    public static func iso8601(_ date: Date) -> String {
        var whole = time_t(date.timeIntervalSince1970.rounded(.down))
        let milliseconds = milliseconds(of: date)
        var parts = tm()
        gmtime_r(&whole, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900,
            Int(parts.tm_mon) + 1, Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min),
            Int(parts.tm_sec), milliseconds)
    }
}

extension Timestamp {
    /// The millisecond within the second, 0–999, robust against binary fractions (.123 is .12299…).
    static func milliseconds(of date: Date) -> Int {
        let microseconds = Int((date.timeIntervalSince1970 * 1e6).rounded())
        return ((microseconds / 1000) % 1000 + 1000) % 1000
    }
}

/// Microseconds on the monotonic clock, for durations.
@inline(__always)
func monotonicMicroseconds() -> Int {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int(now.tv_sec) * 1_000_000 + Int(now.tv_nsec) / 1000
}

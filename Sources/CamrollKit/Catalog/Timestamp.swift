import Foundation
import Glibc

/// Times as the catalog stores them: ISO-8601, UTC, milliseconds (`2026-12-02T16:30:05.123Z`).
/// Formatted by hand with gmtime_r: it runs once per save, and DateFormatter is slow.
public enum Timestamp {
    /// 0001-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: the range the format can write.
    static let earliest = -62_135_596_800.0
    static let latest = 253_402_300_799.999

    /// Any date, however odd (a file's mtime can be anything a filesystem stores): clamped to
    /// the years 1–9999, NaN taken as the earliest.
    public static func iso8601(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        let clamped = seconds.isNaN ? earliest : min(max(seconds, earliest), latest)
        return iso8601(seconds: clamped)
    }

    private static func iso8601(seconds: Double) -> String {
        let date = Date(timeIntervalSince1970: seconds)
        var whole = time_t(seconds.rounded(.down))
        var parts = tm()
        gmtime_r(&whole, &parts)
        // "YYYY-MM-DDTHH:MM:SS.mmmZ", digit by digit: this runs once per save.
        var text = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int, _ digits: Int, at offset: Int) {
            var rest = value
            for position in stride(from: offset + digits - 1, through: offset, by: -1) {
                text[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
        }
        put(Int(parts.tm_year) + 1900, 4, at: 0)
        put(Int(parts.tm_mon) + 1, 2, at: 5)
        put(Int(parts.tm_mday), 2, at: 8)
        put(Int(parts.tm_hour), 2, at: 11)
        put(Int(parts.tm_min), 2, at: 14)
        put(Int(parts.tm_sec), 2, at: 17)
        put(milliseconds(of: date), 3, at: 20)
        for (offset, character) in [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":"), (19, "."), (23, "Z")] as [(Int, Unicode.Scalar)] {
            text[offset] = UInt8(ascii: character)
        }
        return String(decoding: text, as: UTF8.self)
    }
}

extension Timestamp {
    /// Seconds from one catalog timestamp to another (0 if either does not parse).
    static func seconds(between first: String, and last: String) -> Double {
        func parse(_ text: String) -> Double? {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter.date(from: text)?.timeIntervalSince1970
        }
        guard let a = parse(first), let b = parse(last) else { return 0 }
        return max(0, b - a)
    }

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

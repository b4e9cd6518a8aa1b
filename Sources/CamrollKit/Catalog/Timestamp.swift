import FoundationEssentials
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
    /// Seconds since 1970 of a catalog timestamp, `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC), as written
    /// by `iso8601`; nil for anything else.
    static func seconds(ofISO8601 text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.count == 24, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              bytes[19] == UInt8(ascii: "."), bytes[23] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              let millis = number(20..<23), (1...12).contains(month), (1...31).contains(day) else { return nil }
        // Days from 1970-01-01 to the date (Howard Hinnant's days_from_civil).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Double(days * 86_400 + hour * 3600 + minute * 60 + second) + Double(millis) / 1000
    }

    /// Seconds from one catalog timestamp to another (0 if either does not parse).
    static func seconds(between first: String, and last: String) -> Double {
        func parse(_ text: String) -> Double? { Timestamp.seconds(ofISO8601: text) }
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

import FoundationEssentials
import Glibc

/// Times as the catalog stores them: ISO-8601, UTC, milliseconds (`2026-12-02T16:30:05.123Z`).
/// Formatted by hand: it runs once per save, and DateFormatter is slow.
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

    /// "YYYY-MM-DDTHH:MM:SS.mmmZ", digit by digit into a buffer on the stack: this runs once
    /// a save on the catalog's thread, where gmtime_r (which takes glibc's time-zone lock) and a
    /// byte array to decode cost ~1 900 instructions a row (callgrind).
    private static func iso8601(seconds: Double) -> String {
        let whole = Int(seconds.rounded(.down))
        let days = whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400
        let secondOfDay = whole - days * 86_400
        let (year, month, day) = civilDate(daysSince1970: days)
        let millisecond = milliseconds(of: Date(timeIntervalSince1970: seconds))
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { text in
            func put(_ value: Int, _ digits: Int, at offset: Int, then separator: Unicode.Scalar) {
                var rest = value
                for position in stride(from: offset + digits - 1, through: offset, by: -1) {
                    text[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                text[offset + digits] = UInt8(ascii: separator)
            }
            put(year, 4, at: 0, then: "-")
            put(month, 2, at: 5, then: "-")
            put(day, 2, at: 8, then: "T")
            put(secondOfDay / 3600, 2, at: 11, then: ":")
            put(secondOfDay / 60 % 60, 2, at: 14, then: ":")
            put(secondOfDay % 60, 2, at: 17, then: ".")
            put(millisecond, 3, at: 20, then: "Z")
            return String(decoding: UnsafeBufferPointer(text), as: UTF8.self)
        }
    }

    /// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's civil_from_days,
    /// the inverse of the days_from_civil in `seconds(ofISO8601:)`).
    private static func civilDate(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153  // 0 is March
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
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

    /// TZ and the zone's file read once (localtime_r does not; tzset each time would, a row each).
    private static let zoneRead: Void = tzset()

    /// A catalog timestamp as a person reads it: the local time (TZ's zone) to the second,
    /// `2026-12-02 17:30:05`, or to the minute; the text as it is when it does not parse.
    static func local(_ text: String, seconds withSeconds: Bool = true) -> String {
        guard let seconds = seconds(ofISO8601: text), seconds.isFinite else { return text }
        var time = time_t(seconds.rounded(.down))
        var parts = tm()
        _ = zoneRead
        guard localtime_r(&time, &parts) != nil else { return text }
        var buffer = [CChar](repeating: 0, count: 64)
        guard strftime(&buffer, buffer.count, withSeconds ? "%Y-%m-%d %H:%M:%S" : "%Y-%m-%d %H:%M", &parts) > 0 else { return text }
        return String(nulTerminated: buffer)
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

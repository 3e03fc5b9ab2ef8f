public import FoundationEssentials
import Glibc

/// gpsd's time format: ISO 8601 in UTC with milliseconds, `2025-06-01T12:00:05.100Z`.
///
/// `Date` holds a `Double` of seconds since 2001, which cannot represent most millisecond instants exactly;
/// Foundation's formatters truncate, so `.100` can print as `.099`. These round to the millisecond.
///
/// ```swift
/// GPSDTime.string(from: fix.timestamp)           // Optional("2025-06-01T12:00:05.100Z")
/// GPSDTime.date(from: "2025-06-01T12:00:05.100Z")
/// ```
public enum GPSDTime {
    /// The time as gpsd writes it, rounded to the millisecond; `nil` for a date that has no such text: not
    /// finite (a `Date` made from NaN or infinity), or more than 292 million years from 1970 (its milliseconds do
    /// not fit in 64 bits).
    public static func string(from date: Date) -> String? {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard let milliseconds = Int64(exactly: milliseconds) else { return nil }
        let (seconds, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let whole = seconds - (fraction < 0 ? 1 : 0)
        var time = time_t(whole)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return nil }
        let year = Int(parts.tm_year) + 1900
        let millisecond = Int(fraction < 0 ? fraction + 1000 : fraction)
        guard (0...9999).contains(year) else {
            // What %04d writes: at least four digits, a sign counting as one.
            func padded(_ value: Int, _ width: Int) -> String {
                let digits = String(value.magnitude)
                let sign = value < 0 ? "-" : ""
                return sign + String(repeating: "0", count: max(0, width - sign.count - digits.count)) + digits
            }
            let date = [padded(year, 4), padded(Int(parts.tm_mon) + 1, 2), padded(Int(parts.tm_mday), 2)]
            let time = [padded(Int(parts.tm_hour), 2), padded(Int(parts.tm_min), 2), padded(Int(parts.tm_sec), 2)]
            return date.joined(separator: "-") + "T" + time.joined(separator: ":") + "." + padded(millisecond, 3) + "Z"
        }
        // Written digit by digit: once per fix on whereami's hot path, where String(format:) cost most of a line.
        return String(unsafeUninitializedCapacity: 24) { text in
            var index = 0
            func put(_ value: Int, width: Int) {
                var value = value
                for position in stride(from: index + width - 1, through: index, by: -1) {
                    text[position] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                index += width
            }
            func put(_ character: Unicode.Scalar) {
                text[index] = UInt8(character.value)
                index += 1
            }
            put(year, width: 4); put("-"); put(Int(parts.tm_mon) + 1, width: 2); put("-")
            put(Int(parts.tm_mday), width: 2); put("T"); put(Int(parts.tm_hour), width: 2); put(":")
            put(Int(parts.tm_min), width: 2); put(":"); put(Int(parts.tm_sec), width: 2); put(".")
            put(millisecond, width: 3); put("Z")
            return index
        }
    }

    /// Parses an ISO 8601 time, with or without fractional seconds.
    public static func date(from text: String) -> Date? {
        (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
            ?? (try? Date(text, strategy: .iso8601))
    }

    /// A libgps `timespec`, as exactly as a `Date` can hold it.
    static func date(seconds: Int64, nanoseconds: Int64) -> Date {
        // In Double: seconds from anywhere in Int64 (libgps's parse of any text) cannot overflow.
        Date(timeIntervalSinceReferenceDate: (Double(seconds) - 978_307_200) + Double(nanoseconds) / 1e9)
    }
}

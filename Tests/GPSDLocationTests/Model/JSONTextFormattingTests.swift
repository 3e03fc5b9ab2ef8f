import Foundation
import GPSDLocation
import GPSDSystem
import Testing

/// The hand-written formatting on whereami's hot path (times digit by digit, whole numbers without
/// `String(format:)`) writes exactly what the C formats it replaced wrote.
@Suite("JSON text formatting")
struct JSONTextFormattingTests {
    /// The format the digit-by-digit writer replaced.
    private func reference(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        let (seconds, fraction) = Int64(milliseconds).quotientAndRemainder(dividingBy: 1000)
        var time = time_t(seconds - (fraction < 0 ? 1 : 0))
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec),
            Int(fraction < 0 ? fraction + 1000 : fraction))
    }

    @Test func timesAreWrittenAsTheCFormatWroteThem() {
        var generator = SplitMix64(seed: 0x7157)
        // From 1900 to 2100, before and after 1970, with and without milliseconds to round.
        var dates = [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -0.0004),
                     Date(timeIntervalSince1970: -1.5), Date(timeIntervalSince1970: 1_748_779_206.9996),
                     Date(timeIntervalSince1970: 2_145_916_799.999)]
        for _ in 0..<2_000 {
            dates.append(Date(timeIntervalSince1970: Double.random(in: -2_208_988_800...4_102_444_800, using: &generator)))
        }
        for date in dates { #expect(GPSDTime.string(from: date) == reference(date), "\(date.timeIntervalSince1970)") }
        #expect(GPSDTime.string(from: Date(timeIntervalSince1970: 1_748_779_206)) == "2025-06-01T12:00:06.000Z")
    }

    @Test func wholeNumbersKeepOneDecimalAndTheirSign() {
        for value in [0.0, -0.0, 35.0, -3.0, 1.0, 999_999_999_999_999.0, -999_999_999_999_999.0] {
            #expect(JSONText.number(value) == String(format: "%.1f", value), "\(value)")
        }
        #expect(JSONText.number(52.52180605) == "52.52180605")
        #expect(JSONText.number(1e16) == "1e+16")
    }

    @Test func fixedDecimalsAreWhatPrintfWrites() {
        var generator = SplitMix64(seed: 0xF1DE)
        // Coordinates, altitudes, speeds; values that round up to the next whole number or power of ten.
        // Ties: exact (0.5, 1.25: to even), and those the multiplication makes or hides (0.15 is just below).
        var values = [0.0, -0.0, 0.5, 1.5, 2.5, 1.25, -1.25, 0.15, 0.35, 2.675, 1.005, -0.04, 9.99999996, -9.99999996, 0.04, 359.96, 89.99999999, -179.999999951,
                      12_345.678, 0.000_000_1, 100.0]
        for _ in 0..<5_000 {
            values.append(Double.random(in: -180...180, using: &generator))
            values.append(Double.random(in: -500...9_000, using: &generator))
        }
        for value in values {
            for digits in [0, 1, 2, 7] {
                #expect(JSONText.fixed(value, digits: digits) == String(format: "%.\(digits)f", value), "\(value) \(digits)")
            }
        }
    }
}

/// The precision gpsd wrote its numbers with, for the values the decoder makes of two of them: a magnetic heading is
/// the true heading less gpsd's magnetic variation (46.5 − 3.3), and in binary floating point that difference is
/// off in its last bits (34.15 − 4.1 is 30.049999999999997). Rounded to the finer of its parts' decimals, it is
/// the decimal the two measurements make (30.05), and is written as gpsd writes numbers.
enum MeasuredPrecision {
    /// The most decimals a value is rounded to: beyond them, a `Double` of a heading holds no more digits.
    static let maximumDecimals = 9

    /// The decimals of the shortest text that reads back as `value`, as gpsd's text had them (trailing zeros
    /// aside): 34.15 has 2, 4.1 has 1, 30 and 1e3 have 0, 1.5e-7 has 8. `nil` for a value that is not finite.
    static func decimals(of value: Double) -> Int? {
        guard value.isFinite else { return nil }
        // Swift writes the shortest text that reads back: `30.0`, `34.15`, `1.5e-07`, `1e+20`.
        let text = value.magnitude.description
        let parts = text.split(separator: "e", maxSplits: 1)
        let exponent = parts.count == 2 ? Int(parts[1]) ?? 0 : 0
        let fraction = parts[0].split(separator: ".", maxSplits: 1).dropFirst().first ?? ""
        let digits = fraction.reversed().drop { $0 == "0" }.count
        return max(digits - exponent, 0)
    }

    /// `value` rounded to `decimals` places (ties away from zero): the `Double` nearest that decimal. A value
    /// that is not finite, or `decimals` past ``maximumDecimals``, is left as it is.
    static func rounded(_ value: Double, decimals: Int) -> Double {
        guard value.isFinite, (0...maximumDecimals).contains(decimals) else { return value }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = value * scale
        // A value too large for its decimals to matter (2⁵² and more) has no fraction to round.
        guard scaled.magnitude < 0x1p52 else { return value }
        // An integer divided by a power of ten that a Double holds exactly: the one rounding gives the nearest.
        return scaled.rounded(.toNearestOrAwayFromZero) / scale
    }

    /// `value`, made of `parts` by arithmetic, rounded to the finest decimals among them; `value` itself if one
    /// of them is not finite or has more than ``maximumDecimals``.
    static func rounded(_ value: Double, madeOf parts: Double...) -> Double {
        var finest = 0
        for part in parts {
            guard let decimals = decimals(of: part) else { return value }
            finest = max(finest, decimals)
        }
        return rounded(value, decimals: finest)
    }
}

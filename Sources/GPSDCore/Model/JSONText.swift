import FoundationEssentials

/// Pieces of JSON text, written the way ``Location/jsonText`` writes them: for a program that writes its own
/// lines of JSON around fixes (a log's status lines, a message with a fix's fields in it) and wants them to read
/// back, and to show on a terminal, as the library's own do.
///
/// ```swift
/// let line = "{\"event\":\"status\",\"message\":" + JSONText.quoted(message)
///     + ",\"speed\":" + JSONText.number(fix.speed ?? 0) + "}"
/// ```
public enum JSONText {
    /// `text` as a JSON string: quoted, with quotes and backslashes escaped, and every character that is not
    /// ``Swift/Unicode/Scalar/isPrintable`` written as a `\u` escape, so that a line of it shown on a terminal shows a
    /// hostile device name instead of obeying it, and reads back as the same text.
    ///
    /// ```swift
    /// JSONText.quoted("/dev/tty\"S0\u{1B}[2J")   // "/dev/tty\"S0\u001b[2J" (quotes included)
    /// ```
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where !scalar.isPrintable:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

extension Unicode.Scalar {
    /// Whether the scalar is text to show, not a command to whatever shows it: false for the control characters
    /// (C0, DEL and C1: ESC, line breaks, …), the line and paragraph separators and the bidirectional formatting
    /// controls, which can make a terminal or an editor show something other than what is there.
    ///
    /// What ``JSONText/quoted(_:)`` escapes; a program that shows text gpsd or a recording named (a device path,
    /// an error message) can replace the rest the same way:
    ///
    /// ```swift
    /// let shown = String(String.UnicodeScalarView(device.unicodeScalars.map { $0.isPrintable ? $0 : "\u{FFFD}" }))
    /// ```
    public var isPrintable: Bool {
        switch value {
        case 0x00..<0x20, 0x7F...0x9F: false
        case 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: false
        default: true
        }
    }
}

extension JSONText {
    /// A finite number as the shortest JSON text that reads back as the same `Double`; whole numbers keep one
    /// decimal (`35.0`), so a reader sees a measurement, not a count. Not for NaN or an infinity, which JSON
    /// cannot hold (they come out as Swift writes them).
    ///
    /// ```swift
    /// JSONText.number(52.52180605)   // 52.52180605
    /// JSONText.number(35)            // 35.0
    /// ```
    public static func number(_ value: Double) -> String {
        guard value.rounded() == value && abs(value) < 1e15 else { return "\(value)" }
        let whole = Int64(value)
        return (whole == 0 && value.sign == .minus ? "-" : "") + String(whole) + ".0"
    }

    /// `value` with exactly `digits` decimals (0 to 9: fewer are taken as 0, more as 9), as `%.*f` writes it (ties
    /// to even, a negative value keeps its sign even when it rounds to zero), without Foundation's formatting. A
    /// value too large for that falls back to ``number(_:)``.
    ///
    /// ```swift
    /// JSONText.fixed(13.41339573, digits: 7)   // 13.4133957
    /// JSONText.fixed(2.5, digits: 0)           // 2
    /// ```
    public static func fixed(_ value: Double, digits requested: Int) -> String {
        let digits = min(max(requested, 0), 9)   // public: a count out of range is not worth a trap
        var scale: Int64 = 1
        for _ in 0..<digits { scale *= 10 }
        let magnitude = value.magnitude
        let product = magnitude * Double(scale)
        guard value.isFinite, product < 0x1p52 else { return value.isFinite ? number(value) : "\(value)" }
        // The product is rounded; what it lost (exact, by a fused multiply-add) decides a tie it made or hid.
        let lost = (-product).addingProduct(magnitude, Double(scale))
        var units = product.rounded(.down)
        let fraction = product - units
        if fraction > 0.5 || (fraction == 0.5 && (lost > 0 || (lost == 0 && Int64(units) % 2 == 1))) { units += 1 }
        let whole = Int64(units)
        let text = (value.sign == .minus ? "-" : "") + String(whole / scale)
        guard digits > 0 else { return text }
        let decimals = String(whole % scale)
        return text + "." + String(repeating: "0", count: digits - decimals.count) + decimals
    }
}

import Foundation

/// JSON text the package writes by hand (gpsd's commands; whereami's records), where a full encoder would be
/// more than the job needs.
package enum JSONText {
    /// `text` as a JSON string: quoted, with quotes, backslashes and control characters escaped.
    package static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

extension JSONText {
    /// A finite number as the shortest JSON text that reads back as the same `Double`; whole numbers keep one
    /// decimal (`35.0`), so a reader sees a measurement, not a count.
    package static func number(_ value: Double) -> String {
        guard value.rounded() == value && abs(value) < 1e15 else { return "\(value)" }
        let whole = Int64(value)
        return (whole == 0 && value.sign == .minus ? "-" : "") + String(whole) + ".0"
    }
}

// The scan of a POLL's or a DEVICES's members and elements. The checks every line passes before libgps may see it
// (`reportShape(_:)`, `isObject(_:)`) are in `JSONScan+ReportShape.swift`.

/// A walk over the bytes of one JSON text, for the two things libgps does not unpack for us: whether an object
/// names a `class`, and the TPVs inside a POLL reply. It finds where values begin and end; it converts nothing.
///
/// Malformed text ends the walk with `nil`, never a guess: gpsd's lines are well-formed JSON, and a line that is
/// not is skipped like any other garbage. So does nesting deeper than ``maximumDepth``: gpsd's deepest report
/// (a POLL's SKY with its satellites) nests four deep.
struct JSONScan {
    /// The deepest nesting of objects and arrays walked.
    static let maximumDepth = 32
    /// The longest member name libgps reads, in bytes (its `JSON_ATTR_MAX`, 31, less the NUL). libgps 3.22 stops
    /// reading a report at a longer one and keeps what it had read (a SKY's satellites counted 0 of 0), and one in
    /// a satellite followed by a `class` made it loop for ever (found by Scripts/fuzz decoder). gpsd's longest
    /// is 11.
    static let maximumNameLength = 30

    /// JSON's white space: space, tab, line feed, carriage return.
    @inline(__always)
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: some Collection<UInt8>) {
        self.bytes = Array(bytes)
    }

    /// The members of the top-level object: each key with the bytes of its value. `nil` if the text is not one
    /// JSON object.
    static func members(of text: some Collection<UInt8>) -> [(key: String, value: ArraySlice<UInt8>)]? {
        var scan = JSONScan(text)
        return scan.object()
    }

    /// The elements of a JSON array: the bytes of each. `nil` if `text` is not one array.
    static func elements(of text: ArraySlice<UInt8>) -> [ArraySlice<UInt8>]? {
        var scan = JSONScan(text)
        guard scan.take(UInt8(ascii: "[")) else { return nil }
        var elements: [ArraySlice<UInt8>] = []
        if scan.take(UInt8(ascii: "]")) { return scan.atEnd ? elements : nil }
        repeat {
            guard let element = scan.value() else { return nil }
            elements.append(element)
        } while scan.take(UInt8(ascii: ","))
        return scan.take(UInt8(ascii: "]")) && scan.atEnd ? elements : nil
    }

    /// The string a JSON string value holds, when it has no escapes (gpsd's times and class names have none).
    static func plainString(_ value: ArraySlice<UInt8>) -> String? {
        guard value.count >= 2, value.first == UInt8(ascii: "\""), value.last == UInt8(ascii: "\"") else { return nil }
        let inside = value.dropFirst().dropLast()
        guard !inside.contains(UInt8(ascii: "\\")) else { return nil }
        return String(decoding: inside, as: UTF8.self)
    }

    private var atEnd: Bool {
        mutating get {
            skipSpace()
            return index == bytes.count
        }
    }

    private mutating func object() -> [(key: String, value: ArraySlice<UInt8>)]? {
        guard take(UInt8(ascii: "{")) else { return nil }
        var members: [(key: String, value: ArraySlice<UInt8>)] = []
        if take(UInt8(ascii: "}")) { return atEnd ? members : nil }
        repeat {
            skipSpace()
            guard let key = string().flatMap(Self.plainString), take(UInt8(ascii: ":")), let value = value() else { return nil }
            members.append((key, value))
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}")) && atEnd ? members : nil
    }

    /// Skips whitespace, then takes `byte` if it comes next.
    private mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func skipSpace() {
        while index < bytes.count, Self.isSpace(bytes[index]) { index += 1 }
    }

    /// The bytes of the value that begins here (after whitespace).
    private mutating func value() -> ArraySlice<UInt8>? {
        skipSpace()
        guard index < bytes.count else { return nil }
        let start = index
        switch bytes[index] {
        case UInt8(ascii: "\""):
            return string()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            // Brackets nest; strings may hold brackets and quotes of their own.
            var depth = 0
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    guard string() != nil else { return nil }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    guard depth <= Self.maximumDepth else { return nil }
                case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
                default: break
                }
                index += 1
                if depth == 0 { return bytes[start..<index] }
            }
            return nil
        default:
            // A number, true, false or null: up to the next delimiter.
            while index < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D]
                .contains(bytes[index]) { index += 1 }
            return index > start ? bytes[start..<index] : nil
        }
    }

    /// The bytes of the string that begins here, quotes included.
    private mutating func string() -> ArraySlice<UInt8>? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index
        index += 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""):
                index += 1
                return bytes[start..<index]
            default: index += 1
            }
        }
        return nil
    }
}

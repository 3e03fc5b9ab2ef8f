/// A walk over the bytes of one JSON text, for the two things libgps does not unpack for us: whether an object
/// names a `class`, and the TPVs inside a POLL reply. It finds where values begin and end; it converts nothing.
///
/// Malformed text ends the walk with `nil`, never a guess: gpsd's lines are well-formed JSON, and a line that is
/// not is skipped like any other garbage. So does nesting deeper than ``maximumDepth``: gpsd's deepest report
/// (a POLL's SKY with its satellites) nests four deep.
struct JSONScan {
    /// The deepest nesting of objects and arrays walked.
    static let maximumDepth = 32

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
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
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

extension JSONScan {
    /// Whether `bytes` are one JSON object, white space around it allowed, nested at most ``maximumDepth`` deep:
    /// what the decoder hands libgps, and nothing else. gpsd sends nothing else, and libgps 3.22's parser loops for
    /// ever on some lines that are not JSON (`{e"class":"WATCH"`, found by Scripts/fuzz decoder).
    ///
    /// Strings are taken as JSON has them, escapes and all, but bytes below 0x20 inside them are let through as
    /// libgps lets them (a peer's raw escape sequence is output's to neutralise); numbers, `true`, `false` and
    /// `null` must be what JSON says they are. Walks the bytes once and allocates nothing.
    static func isObject(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var walk = Walk(bytes: bytes)
        walk.skipSpace()
        guard walk.index < bytes.count, bytes[walk.index] == UInt8(ascii: "{"), walk.value(depth: 0) else { return false }
        walk.skipSpace()
        return walk.index == bytes.count
    }

    /// Whether `bytes` are a report as gpsd writes one: an object (``isObject(_:)``) that begins `{"class":"`.
    /// libgps finds a report's class as the first `"class":"` anywhere in the line, and then reads the whole line
    /// as a report of that class: where that is not the top object's own, its parser can loop for ever (a
    /// DEVICES whose class member comes after its devices, found by Scripts/fuzz decoder).
    static func isReport(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let start = bytes.firstIndex { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } ?? bytes.count
        let opening = #"{"class":""#.utf8
        guard bytes.count - start >= opening.count, zip(bytes[start...], opening).allSatisfy({ $0 == $1 }) else {
            return false
        }
        return isObject(bytes)
    }

    /// The validating walk of ``isObject(_:)``.
    private struct Walk {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        /// Skips white space, then takes `byte` if it comes next.
        mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// One value, at nesting `depth`.
        mutating func value(depth: Int) -> Bool {
            skipSpace()
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                guard depth < JSONScan.maximumDepth else { return false }
                index += 1
                if take(UInt8(ascii: "}")) { return true }
                repeat {
                    skipSpace()
                    guard string(), take(UInt8(ascii: ":")), value(depth: depth + 1) else { return false }
                } while take(UInt8(ascii: ","))
                return take(UInt8(ascii: "}"))
            case UInt8(ascii: "["):
                guard depth < JSONScan.maximumDepth else { return false }
                index += 1
                if take(UInt8(ascii: "]")) { return true }
                repeat {
                    guard value(depth: depth + 1) else { return false }
                } while take(UInt8(ascii: ","))
                return take(UInt8(ascii: "]"))
            case UInt8(ascii: "\""):
                return string()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default:
                return number()
            }
        }

        /// A string, from its opening quote past its closing one.
        mutating func string() -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return false }
            index += 1
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    index += 1
                    return true
                case UInt8(ascii: "\\"):
                    index += 2
                default:
                    index += 1
                }
            }
            return false
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        /// A number as JSON writes it: `-?(0|[1-9]digits*)(.digits)?([eE][+-]?digits)?`.
        mutating func number() -> Bool {
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            if index < bytes.count, bytes[index] == UInt8(ascii: "0") {
                index += 1   // no digit may follow a leading zero
                if index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { return false }
            } else {
                guard digits() else { return false }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() else { return false }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() else { return false }
            }
            return true
        }

        /// One digit or more.
        mutating func digits() -> Bool {
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index > start
        }
    }
}

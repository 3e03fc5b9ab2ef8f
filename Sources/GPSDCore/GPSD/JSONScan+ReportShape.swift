// The strict checks of a line before libgps may see it: one JSON object, as JSON has it, in a shape gpsd sends.

extension JSONScan {
    /// Whether `bytes` are one JSON object, white space around it allowed, nested at most ``maximumDepth`` deep:
    /// what the decoder hands libgps, and nothing else. gpsd sends nothing else, and libgps 3.22's parser loops for
    /// ever on some lines that are not JSON (`{e"class":"WATCH"`, found by Scripts/fuzz decoder).
    ///
    /// Strings are taken as JSON has them, escapes and all, but bytes below 0x20 inside them are let through as
    /// libgps lets them (a peer's raw escape sequence is output's to neutralise), except NUL, where libgps's C
    /// string would end; numbers, `true`, `false` and `null` must be what JSON says they are. Walks the bytes once
    /// and allocates nothing.
    static func isObject(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var walk = Walk(bytes: bytes)
        walk.skipSpace()
        guard walk.index < bytes.count, bytes[walk.index] == UInt8(ascii: "{"), walk.value(depth: 0) else { return false }
        walk.skipSpace()
        return walk.index == bytes.count
    }

    /// What the decoder must know of a line before libgps may see it.
    struct ReportShape: Equatable {
        /// The report's class, as its first member names it.
        var className: String
        /// Whether every member's value is a string, a number or a literal (no object, no array), and no member
        /// but the first is named `class`.
        var isFlat: Bool
        /// Whether what is not flat is a `satellites` array of flat objects, none with a member named `class`,
        /// as in a SKY.
        var nestsOnlySatellites: Bool
        /// Whether every member's name, the satellites' included, is at most ``maximumNameLength`` bytes long.
        var namesFit = true
        /// Whether a string has an escape: then only a search as lenient as libgps's finds every `time` it reads
        /// (``Plausibility/firstTimeTextNotACalendarTime(in:)``).
        var hasEscapes = false
        /// The text of the first `time` member, of the report or of a satellite, that is a string but not a calendar
        /// time (``Plausibility/isCalendarTime(_:)``), found on the walk. In a line without escapes whose shape the
        /// decoder hands libgps (``isFlat``, or ``nestsOnlySatellites``), the one
        /// ``Plausibility/firstTimeTextNotACalendarTime(in:)`` finds; in any other shape a `time` nested elsewhere
        /// is not looked for.
        var firstTimeNotACalendarTime: String?
        /// A SKY's `satellites` array as gpsd sent it, counted on the walk; `nil` without one (of two, the last).
        /// libgps holds only so many (`cgps_skyview_capacity()`): these counts are true however long the list is.
        var satelliteList: SatelliteList?
    }

    /// How many satellites a SKY's list holds, and how many of them say they are used.
    struct SatelliteList: Equatable {
        /// The objects in the array.
        var listed = 0
        /// Those whose last `used` member is `true` (libgps reads a satellite so).
        var used = 0
    }

    /// The shape of a report as gpsd writes one: an object (``isObject(_:)``) that begins `{"class":"`; `nil` for
    /// anything else. libgps finds a report's class as the first `"class":"` anywhere in the line and reads the
    /// whole line as one of that class, and its parser (3.22's) loops for ever on some objects and arrays where
    /// it expects none (found by Scripts/fuzz decoder): the decoder hands it only shapes gpsd sends.
    static func reportShape(_ bytes: UnsafeBufferPointer<UInt8>) -> ReportShape? {
        var walk = Walk(bytes: bytes)
        walk.skipSpace()
        let opening = #"{"class":""#.utf8
        guard bytes.count - walk.index >= opening.count, zip(bytes[walk.index...], opening).allSatisfy({ $0 == $1 })
        else { return nil }
        // One walk: the top object's members, each value checked as ``isObject(_:)`` checks it.
        _ = walk.take(UInt8(ascii: "{"))
        var shape = ReportShape(className: "", isFlat: true, nestsOnlySatellites: true)
        var isFirstMember = true
        repeat {
            walk.skipSpace()
            let keyStart = walk.index
            guard walk.string() else { return nil }
            let key = UnsafeBufferPointer(rebasing: bytes[(keyStart + 1)..<(walk.index - 1)])   // between its quotes
            guard walk.take(UInt8(ascii: ":")) else { return nil }
            walk.skipSpace()
            let valueStart = walk.index
            // A SKY's satellites are walked once: checked as JSON and for their shape together.
            var satellitesFit = false
            if !isFirstMember, valueStart < bytes.count, bytes[valueStart] == UInt8(ascii: "["),
               Self.isName(key, "satellites") {
                satellitesFit = isArrayOfFlatObjects(&walk, shape: &shape)
                if !satellitesFit { walk.index = valueStart }
            }
            guard satellitesFit || walk.value(depth: 1) else { return nil }
            if isFirstMember {   // "class", by the opening, its value a string: it may be empty
                isFirstMember = false
                shape.className = String(decoding: bytes[(valueStart + 1)..<(walk.index - 1)], as: UTF8.self)
                continue
            }
            let first = bytes[valueStart]
            if key.count > maximumNameLength { shape.namesFit = false }
            if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") {
                shape.isFlat = false
                if !satellitesFit { shape.nestsOnlySatellites = false }
            } else if Self.isName(key, "time") {
                Self.noteTime(bytes, from: valueStart, to: walk.index, in: &shape)
            } else if Self.isName(key, "class") {
                // A second class: libgps 3.22 loops for ever on `{"class":"TPV","class":"VERSION"}`.
                shape.isFlat = false
                shape.nestsOnlySatellites = false
            }
        } while walk.take(UInt8(ascii: ","))
        guard walk.take(UInt8(ascii: "}")) else { return nil }
        walk.skipSpace()
        shape.hasEscapes = walk.sawEscape
        return walk.index == bytes.count ? shape : nil
    }

    /// The value of a `time` member, `start ..< end`: notes its text if it is a string but not a calendar time,
    /// and the first such.
    private static func noteTime(
        _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, in shape: inout ReportShape
    ) {
        guard shape.firstTimeNotACalendarTime == nil, end - start >= 2, bytes[start] == UInt8(ascii: "\"") else { return }
        let text = UnsafeBufferPointer(rebasing: bytes[(start + 1)..<(end - 1)])
        if !Plausibility.isCalendarTime(text) { shape.firstTimeNotACalendarTime = String(decoding: text, as: UTF8.self) }
    }

    /// Whether a member's name, as its bytes between the quotes, is `name`. An escape counts as its bytes, as
    /// libgps counts it; so does a name's length, which must be at most ``maximumNameLength`` (libgps's
    /// `JSON_ATTR_MAX`).
    private static func isName(_ key: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        guard key.count == count else { return false }
        for offset in 0..<count where key[offset] != name.utf8Start[offset] { return false }
        return true
    }

    /// Whether the walk is at an array that holds only objects whose values are strings, numbers or literals, and
    /// none of them a member named `class`, as JSON has them: `"class":"` inside a satellite made libgps 3.22 read
    /// on from there, and loop (found by Scripts/fuzz decoder). Walks past the array if so; clears the shape's
    /// `namesFit` if a name is too long for libgps, notes the satellites' `time` members, and counts the satellites
    /// listed and used (``ReportShape/satelliteList``).
    private static func isArrayOfFlatObjects(_ walk: inout Walk, shape: inout ReportShape) -> Bool {
        let bytes = walk.bytes
        guard walk.take(UInt8(ascii: "[")) else { return false }
        var list = SatelliteList()
        if walk.take(UInt8(ascii: "]")) {
            shape.satelliteList = list
            return true
        }
        repeat {
            guard walk.take(UInt8(ascii: "{")) else { return false }
            list.listed += 1
            var isUsed = false
            defer { if isUsed { list.used += 1 } }
            if walk.take(UInt8(ascii: "}")) { continue }
            repeat {
                walk.skipSpace()
                let keyStart = walk.index
                guard walk.string() else { return false }
                let key = UnsafeBufferPointer(rebasing: bytes[(keyStart + 1)..<(walk.index - 1)])   // between its quotes
                guard walk.take(UInt8(ascii: ":")), !isName(key, "class") else { return false }
                if key.count > maximumNameLength { shape.namesFit = false }
                walk.skipSpace()
                let valueStart = walk.index
                guard walk.scalar() else { return false }
                if isName(key, "time") { noteTime(bytes, from: valueStart, to: walk.index, in: &shape) }
                // libgps's boolean is true for the literal `true` alone, and the last of two `used` wins.
                if isName(key, "used") { isUsed = walk.index - valueStart == 4 && bytes[valueStart] == UInt8(ascii: "t") }
            } while walk.take(UInt8(ascii: ","))
            guard walk.take(UInt8(ascii: "}")) else { return false }
        } while walk.take(UInt8(ascii: ","))
        guard walk.take(UInt8(ascii: "]")) else { return false }
        shape.satelliteList = list
        return true
    }

    /// The validating walk of ``isObject(_:)``.
    private struct Walk {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        /// Whether a string walked had an escape.
        var sawEscape = false

        @inline(__always)
        mutating func skipSpace() {
            while index < bytes.count, JSONScan.isSpace(bytes[index]) { index += 1 }
        }

        /// Skips white space, then takes `byte` if it comes next.
        @inline(__always)
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
            default:
                return scalar()
            }
        }

        /// One string, number or literal (`true`, `false`, `null`) here: no object, no array.
        mutating func scalar() -> Bool {
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return number()
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
                    guard index + 1 < bytes.count, bytes[index + 1] != 0 else { return false }
                    sawEscape = true
                    index += 2
                case 0:
                    return false   // libgps would read the string, and the line, as ending here
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
        @inline(__always)
        mutating func digits() -> Bool {
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index > start
        }
    }
}

import ArgumentParser
import FoundationEssentials
import GPSDLocation

/// The formats `whereami` writes fixes in.
enum OutputFormat: String, CaseIterable, ExpressibleByArgument {
    case text, json, csv, geojson, gpx

    /// A writer that turns fixes into this format's text: a header, one piece per fix, a footer.
    func makeWriter(streaming: Bool) -> any LocationWriter {
        switch self {
        case .text: TextWriter(streaming: streaming)
        case .json: JSONLinesWriter()
        case .csv: CSVWriter()
        case .geojson: GeoJSONWriter()
        case .gpx: GPXWriter()
        }
    }
}

/// Turns fixes into text. `header` comes before the first fix, `footer` closes the document.
protocol LocationWriter: Sendable {
    var header: String { get }
    /// The record of `location`, with what `context` knows beside it (its age and the heading as it is written).
    mutating func record(_ location: Location, _ context: RecordContext) -> String
    var footer: String { get }
}

extension LocationWriter {
    /// The record of `location` alone: no age, no heading.
    mutating func record(_ location: Location) -> String { record(location, RecordContext()) }
}

/// What whereami writes beside a fix's own values (JSON, CSV and GeoJSON's properties; documented in
/// JSONSchema.md): how old the fix is as its record is made, and the heading then, if one of the fix's time is
/// known.
struct RecordContext: Sendable, Equatable {
    /// ``Location/age`` as the record is made; `nil` when the manager cannot tell it.
    var age: Duration?
    /// The newest heading gpsd reported, if it is of the fix's time (``init(fix:heading:window:)``).
    var heading: Heading?

    init(age: Duration? = nil, heading: Heading? = nil) {
        self.age = age
        self.heading = heading
    }

    /// The context of `fix`'s record made now: the fix's age now, and `heading` if its time is within `window` of
    /// the fix's, before or after (a heading sensor's report comes beside its epoch's fix, not with it). A heading
    /// without a time, or one further from the fix, is not the fix's: it is left out rather than passed off as
    /// current.
    init(fix: Location, heading: Heading?, window: Duration) {
        age = fix.age
        let seconds = Double(window.components.seconds) + Double(window.components.attoseconds) / 1e18
        if let heading, let time = heading.timestamp, abs(time.timeIntervalSince(fix.timestamp)) <= seconds {
            self.heading = heading
        }
    }

    /// The members whereami adds to a fix's JSON object, in order, each a key and its value as JSON text: `age` in
    /// seconds (to the millisecond), `heading` and `magneticHeading` in degrees; those not known are left out.
    var jsonFields: [(key: String, value: String)] {
        var fields: [(key: String, value: String)] = []
        if let age = ageSeconds { fields.append(("age", JSONText.number(age))) }
        if let heading, heading.trueHeading.isFinite {
            fields.append(("heading", JSONText.number(heading.trueHeading)))
            if let magnetic = heading.magneticHeading, magnetic.isFinite {
                fields.append(("magneticHeading", JSONText.number(magnetic)))
            }
        }
        return fields
    }

    /// The age in seconds, rounded to the millisecond.
    var ageSeconds: Double? {
        guard let age else { return nil }
        return (age / .milliseconds(1)).rounded() / 1000
    }
}

// MARK: - Field formatting shared by the writers

enum Field {
    /// ISO 8601 UTC with milliseconds: `2025-06-01T12:00:05.000Z`; `nil` for a time with no calendar date.
    static func timestamp(_ date: Date) -> String? { GPSDTime.string(from: date) }

    /// The shortest text that reads back as the same number.
    static func number(_ value: Double) -> String { JSONText.number(value) }

    /// The named values of a fix, in the order of the library's JSON schema; absent values are left out.
    static func properties(of location: Location, includeCoordinate: Bool) -> [(key: String, value: String)] {
        location.jsonFields(includingCoordinate: includeCoordinate)
    }

    static func jsonObject(_ fields: [(key: String, value: String)]) -> String {
        "{" + fields.map { JSONText.quoted($0.key) + ":" + $0.value }.joined(separator: ",") + "}"
    }

    /// `text` for XML 1.0 text or an attribute: markup escaped, and what XML cannot hold at all (control
    /// characters, even escaped, and U+FFFE/U+FFFF) replaced with U+FFFD, as ``printable(_:)`` replaces what a
    /// terminal would obey.
    static func xmlEscaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case _ where !scalar.isPrintable || scalar.value == 0xFFFE || scalar.value == 0xFFFF:
                out.unicodeScalars.append("\u{FFFD}")
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `text` with every character a terminal or a reader would take as a command instead of text (control
    /// characters such as ESC, line breaks, bidirectional overrides) replaced with U+FFFD: what gpsd or a
    /// recording names (a device path, an error message) is shown, never obeyed.
    static func printable(_ text: String) -> String {
        guard !text.unicodeScalars.allSatisfy(\.isPrintable) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { $0.isPrintable ? $0 : "\u{FFFD}" }))
    }
}

// MARK: - Writers

/// For people: a block for one fix, a line per fix when streaming.
struct TextWriter: LocationWriter {
    private func fixed(_ value: Double, _ digits: Int) -> String { JSONText.fixed(value, digits: digits) }

    let streaming: Bool
    var header: String { "" }
    var footer: String { "" }

    mutating func record(_ location: Location, _ context: RecordContext) -> String {
        streaming ? line(location) : block(location)
    }

    private func line(_ l: Location) -> String {
        var parts = [Field.timestamp(l.timestamp) ?? "-", fixed(l.coordinate.latitude, 7), fixed(l.coordinate.longitude, 7)]
        if let altitude = l.altitude { parts.append(fixed(altitude, 1) + "m") }
        if let accuracy = l.horizontalAccuracy { parts.append("±" + fixed(accuracy, 1) + "m") }
        if let speed = l.speed { parts.append(fixed(speed, 2) + "m/s") }
        if let course = l.course { parts.append(fixed(course, 1) + "°") }
        parts.append(l.fix.rawValue)
        return parts.joined(separator: "  ") + "\n"
    }

    private func block(_ l: Location) -> String {
        let lat = l.coordinate.latitude, lon = l.coordinate.longitude
        var rows = [
            ("Latitude", fixed(abs(lat), 7) + "° " + (lat < 0 ? "S" : "N")),
            ("Longitude", fixed(abs(lon), 7) + "° " + (lon < 0 ? "W" : "E")),
        ]
        if let altitude = l.altitude { rows.append(("Altitude", fixed(altitude, 1) + " m above sea level")) }
        let accuracy = [l.horizontalAccuracy.map { "±" + fixed($0, 1) + " m horizontal" },
                        l.verticalAccuracy.map { "±" + fixed($0, 1) + " m vertical" }].compactMap { $0 }
        if !accuracy.isEmpty { rows.append(("Accuracy", accuracy.joined(separator: ", "))) }
        if let speed = l.speed { rows.append(("Speed", fixed(speed, 2) + " m/s (" + fixed(speed * 3.6, 1) + " km/h)")) }
        if let course = l.course { rows.append(("Course", fixed(course, 1) + "°")) }
        if let timestamp = Field.timestamp(l.timestamp) { rows.append(("Time", timestamp)) }
        rows.append(("Fix", "\(l.fix.rawValue), \(l.status.rawValue)" + (l.device.map { " (\(Field.printable($0)))" } ?? "")))
        return rows.map { "\($0.0 + ":")\(String(repeating: " ", count: max(1, 11 - $0.0.count)))\($0.1)" }
            .joined(separator: "\n") + "\n"
    }
}

/// NDJSON: one JSON object per fix, per line: ``Location/jsonText``, then whereami's own members
/// (``RecordContext/jsonFields``).
struct JSONLinesWriter: LocationWriter {
    var header: String { "" }
    var footer: String { "" }
    mutating func record(_ location: Location, _ context: RecordContext) -> String {
        let extra = context.jsonFields
        guard !extra.isEmpty else { return location.jsonText + "\n" }
        var line = location.jsonText
        line.removeLast()   // the object's "}"
        for (key, value) in extra { line += "," + JSONText.quoted(key) + ":" + value }
        return line + "}\n"
    }
}

/// CSV with a header row; absent values are empty cells.
///
/// The columns are always the same, in the same order: the first fifteen as whereami has always written them,
/// then the rest of the JSON object's members (``Location/jsonText``) in its order, then whereami's own (`age`,
/// `heading`, `magneticHeading`). A column is never moved or removed; new ones go at the end.
struct CSVWriter: LocationWriter {
    static let columns = ["timestamp", "latitude", "longitude", "altitude", "ellipsoidalAltitude",
                          "horizontalAccuracy", "verticalAccuracy", "speed", "speedAccuracy", "course",
                          "courseAccuracy", "climb", "fix", "status", "device",
                          "latitudeAccuracy", "longitudeAccuracy",
                          "latitudeDeviation", "longitudeDeviation", "altitudeDeviation",
                          "baselineEast", "baselineNorth", "baselineUp", "baselineLength", "baselineCourse",
                          "age", "heading", "magneticHeading"]
    var header: String { Self.columns.joined(separator: ",") + "\n" }
    var footer: String { "" }

    mutating func record(_ l: Location, _ context: RecordContext) -> String {
        // A number as JSON writes it; empty where JSON leaves it out: unknown, or not finite (none from gpsd is).
        func n(_ value: Double?) -> String? { value.flatMap { $0.isFinite ? Field.number($0) : nil } }
        let cells: [String?] = [
            Field.timestamp(l.timestamp), n(l.coordinate.latitude), n(l.coordinate.longitude),
            n(l.altitude), n(l.ellipsoidalAltitude), n(l.horizontalAccuracy), n(l.verticalAccuracy), n(l.speed),
            n(l.speedAccuracy), n(l.course), n(l.courseAccuracy), n(l.climb),
            l.fix.rawValue, l.status.rawValue, l.device.map(Field.printable),
            n(l.latitudeAccuracy), n(l.longitudeAccuracy),
            n(l.deviation?.latitude), n(l.deviation?.longitude), n(l.deviation?.altitude),
            n(l.baseline?.east), n(l.baseline?.north), n(l.baseline?.up), n(l.baseline?.length), n(l.baseline?.course),
            n(context.ageSeconds), n(context.heading?.trueHeading), n(context.heading?.magneticHeading),
        ]
        return cells.map { Self.cell($0 ?? "") }.joined(separator: ",") + "\n"
    }

    static func cell(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }
}

/// A GeoJSON FeatureCollection of Points, one feature per fix, written as the fixes come.
///
/// A position is `[longitude, latitude, height]`, the height above the WGS84 ellipsoid as RFC 7946 §4 asks
/// (``Location/ellipsoidalAltitude``, gpsd's `altHAE`), left out when the fix has none; the height above sea
/// level stays among the properties (`altitude`).
struct GeoJSONWriter: LocationWriter {
    private var count = 0
    var header: String { "{\"type\":\"FeatureCollection\",\"features\":[\n" }
    var footer: String { "]}\n" }

    mutating func record(_ l: Location, _ context: RecordContext) -> String {
        defer { count += 1 }
        var position = [Field.number(l.coordinate.longitude), Field.number(l.coordinate.latitude)]
        if let height = l.ellipsoidalAltitude { position.append(Field.number(height)) }
        let feature = "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":["
            + position.joined(separator: ",") + "]},\"properties\":"
            + Field.jsonObject(Field.properties(of: l, includeCoordinate: false) + context.jsonFields) + "}"
        return (count == 0 ? "" : ",\n") + feature
    }
}

/// A GPX 1.1 track: one `trkpt` per fix.
struct GPXWriter: LocationWriter {
    var header: String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="whereami" xmlns="http://www.topografix.com/GPX/1/1">
        <trk><name>whereami</name><trkseg>

        """
    }
    var footer: String { "</trkseg></trk>\n</gpx>\n" }

    mutating func record(_ l: Location, _ context: RecordContext) -> String {
        var point = "<trkpt lat=\"\(Field.number(l.coordinate.latitude))\" lon=\"\(Field.number(l.coordinate.longitude))\">"
        if let altitude = l.altitude { point += "<ele>\(Field.number(altitude))</ele>" }
        if let timestamp = Field.timestamp(l.timestamp) { point += "<time>\(timestamp)</time>" }
        let fix = switch l.status {
        case .dgps, .rtkFixed, .rtkFloat: "dgps"
        case .precisePositioning: "pps"
        default: l.fix == .threeDimensional ? "3d" : "2d"
        }
        // GPX's schema fixes the order of a point's elements: ele, time, …, src, …, fix.
        if let device = l.device { point += "<src>\(Field.xmlEscaped(device))</src>" }
        point += "<fix>\(fix)</fix>"
        return point + "</trkpt>\n"
    }
}

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
    mutating func record(_ location: Location) -> String
    var footer: String { get }
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

    mutating func record(_ location: Location) -> String {
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

/// NDJSON: one JSON object per fix, per line.
struct JSONLinesWriter: LocationWriter {
    var header: String { "" }
    var footer: String { "" }
    mutating func record(_ location: Location) -> String {
        location.jsonText + "\n"
    }
}

/// CSV with a header row; absent values are empty cells.
struct CSVWriter: LocationWriter {
    static let columns = ["timestamp", "latitude", "longitude", "altitude", "ellipsoidalAltitude",
                          "horizontalAccuracy", "verticalAccuracy", "speed", "speedAccuracy", "course",
                          "courseAccuracy", "climb", "fix", "status", "device"]
    var header: String { Self.columns.joined(separator: ",") + "\n" }
    var footer: String { "" }

    mutating func record(_ l: Location) -> String {
        let values: [String?] = [
            Field.timestamp(l.timestamp), Field.number(l.coordinate.latitude), Field.number(l.coordinate.longitude),
            l.altitude.map(Field.number), l.ellipsoidalAltitude.map(Field.number),
            l.horizontalAccuracy.map(Field.number), l.verticalAccuracy.map(Field.number), l.speed.map(Field.number),
            l.speedAccuracy.map(Field.number), l.course.map(Field.number), l.courseAccuracy.map(Field.number),
            l.climb.map(Field.number), l.fix.rawValue, l.status.rawValue, l.device.map(Field.printable),
        ]
        return values.map { Self.cell($0 ?? "") }.joined(separator: ",") + "\n"
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

    mutating func record(_ l: Location) -> String {
        defer { count += 1 }
        var position = [Field.number(l.coordinate.longitude), Field.number(l.coordinate.latitude)]
        if let height = l.ellipsoidalAltitude { position.append(Field.number(height)) }
        let feature = "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":["
            + position.joined(separator: ",") + "]},\"properties\":"
            + Field.jsonObject(Field.properties(of: l, includeCoordinate: false)) + "}"
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

    mutating func record(_ l: Location) -> String {
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

import Foundation
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Parsers for every format whereami writes, each a real parser (JSONSerialization, XMLParser, Python's csv),
/// each returning the fixes as ``Record``s and recording an issue for whatever breaks the documented format.
enum Formats {
    /// The field names of `--format json`, as the README documents them (the library's `Location` names).
    /// The keys of Sources/GPSDLocation/Docs.docc/JSONSchema.md.
    /// With whereami's own members (`age`, `heading`, `magneticHeading`), documented there too.
    static let jsonFields: Set<String> = numericFields.union(stringFields)
    static let numericFields: Set<String> = [
        "latitude", "longitude", "altitude", "ellipsoidalAltitude", "horizontalAccuracy", "verticalAccuracy",
        "latitudeAccuracy", "longitudeAccuracy", "latitudeDeviation", "longitudeDeviation", "altitudeDeviation",
        "baselineEast", "baselineNorth", "baselineUp", "baselineLength", "baselineCourse",
        "speed", "speedAccuracy", "course", "courseAccuracy", "climb", "age", "heading", "magneticHeading",
    ]
    static let stringFields: Set<String> = ["timestamp", "fix", "status", "device"]

    /// `2025-06-01T12:00:05.000Z`: ISO 8601, UTC, milliseconds.
    static func isISO8601UTCMilliseconds(_ text: String) -> Bool {
        text.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil
    }

    // MARK: JSON (NDJSON)

    /// One line of `--format json`: a JSON object with the documented names, numbers as numbers, no null, no
    /// NaN, the timestamp in ISO 8601 UTC with milliseconds.
    static func jsonRecord(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Record {
        #expect(!line.contains("null"), "no null: \(line)", sourceLocation: sourceLocation)
        #expect(!line.lowercased().contains("nan") && !line.lowercased().contains("inf"),
                "no NaN or infinity: \(line)", sourceLocation: sourceLocation)
        #expect(!line.contains("\n"), sourceLocation: sourceLocation)
        let parsed = try JSONSerialization.jsonObject(with: Data(line.utf8))
        let object = try #require(parsed as? [String: Any], "a JSON object: \(line)", sourceLocation: sourceLocation)
        return try properties(object, withCoordinate: true, line: line, sourceLocation: sourceLocation)
    }

    /// The members of a JSON line or of a GeoJSON feature's `properties`.
    private static func properties(
        _ object: [String: Any], withCoordinate: Bool, line: String, sourceLocation: SourceLocation
    ) throws -> Record {
        let unknown = Set(object.keys).subtracting(jsonFields)
        #expect(unknown.isEmpty, "undocumented fields \(unknown.sorted()) in \(line)", sourceLocation: sourceLocation)
        for (key, value) in object {
            #expect(!(value is NSNull), "\(key) is null in \(line)", sourceLocation: sourceLocation)
            if numericFields.contains(key) {
                #expect(number(value) != nil, "\(key) is a number in \(line)", sourceLocation: sourceLocation)
            }
            if stringFields.contains(key) {
                #expect(value is String, "\(key) is a string in \(line)", sourceLocation: sourceLocation)
            }
        }
        for required in ["timestamp", "fix", "status"] {
            #expect(object[required] != nil, "\(required) present in \(line)", sourceLocation: sourceLocation)
        }
        let timestamp = object["timestamp"] as? String
        if let timestamp {
            #expect(isISO8601UTCMilliseconds(timestamp), "timestamp \(timestamp) is ISO 8601 UTC with milliseconds",
                    sourceLocation: sourceLocation)
        }
        var latitude = 0.0, longitude = 0.0
        if withCoordinate {
            latitude = try #require(number(object["latitude"]), "latitude in \(line)", sourceLocation: sourceLocation)
            longitude = try #require(number(object["longitude"]), "longitude in \(line)", sourceLocation: sourceLocation)
        } else {
            #expect(object["latitude"] == nil && object["longitude"] == nil,
                    "the coordinate is the geometry's, not a property: \(line)", sourceLocation: sourceLocation)
        }
        return Record(
            timestamp: timestamp, latitude: latitude, longitude: longitude, altitude: number(object["altitude"]),
            speed: number(object["speed"]), course: number(object["course"]), fix: object["fix"] as? String)
    }

    /// A JSON number as a Double (a string or anything else is not one).
    static func number(_ value: Any?) -> Double? {
        switch value {
        case let double as Double: double
        case let number as NSNumber: number.doubleValue
        default: nil
        }
    }

    // MARK: GeoJSON

    /// A whole `--format geojson` document: a FeatureCollection of Point features, `[lon, lat(, height)]`, the
    /// height the fix's `ellipsoidalAltitude` (RFC 7946 §4), there exactly when the properties have one.
    static func geoJSONRecords(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [Record] {
        let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8))
        let collection = try #require(parsed as? [String: Any], "a JSON object", sourceLocation: sourceLocation)
        #expect(collection["type"] as? String == "FeatureCollection", sourceLocation: sourceLocation)
        let features = try #require(collection["features"] as? [[String: Any]], "features", sourceLocation: sourceLocation)
        return try features.map { feature in
            #expect(feature["type"] as? String == "Feature", sourceLocation: sourceLocation)
            let geometry = try #require(feature["geometry"] as? [String: Any], "geometry", sourceLocation: sourceLocation)
            #expect(geometry["type"] as? String == "Point", sourceLocation: sourceLocation)
            let coordinates = try #require(geometry["coordinates"] as? [Any], "coordinates", sourceLocation: sourceLocation)
            let position = coordinates.compactMap { number($0) }
            #expect(position.count == coordinates.count && (2...3).contains(position.count),
                    "a position is 2 or 3 numbers: \(coordinates)", sourceLocation: sourceLocation)
            let properties = try #require(feature["properties"] as? [String: Any], "properties",
                                          sourceLocation: sourceLocation)
            var record = try Self.properties(properties, withCoordinate: false, line: "\(feature)",
                                             sourceLocation: sourceLocation)
            try #require(position.count >= 2, sourceLocation: sourceLocation)
            record.longitude = position[0]
            record.latitude = position[1]
            let height = position.count == 3 ? position[2] : nil
            #expect(height == number(properties["ellipsoidalAltitude"]),
                    "the position's height is the fix's above the ellipsoid: \(feature)", sourceLocation: sourceLocation)
            record.height = height
            return record
        }
    }

    // MARK: GPX

    /// A whole `--format gpx` document, read by XMLParser: a `gpx` root with a track of `trkpt`s.
    static func gpxRecords(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [Record] {
        let reader = GPXReader()
        let parser = XMLParser(data: Data(text.utf8))
        parser.delegate = reader
        let parsed = parser.parse()
        #expect(parsed, "XMLParser accepts the document: \(parser.parserError.map { "\($0)" } ?? "") \(reader.error ?? "")",
                sourceLocation: sourceLocation)
        try #require(parsed, sourceLocation: sourceLocation)
        #expect(reader.root == "gpx", sourceLocation: sourceLocation)
        #expect(reader.version == "1.1", sourceLocation: sourceLocation)
        #expect(reader.trackCount == 1 && reader.segmentCount == 1, "one trk with one trkseg", sourceLocation: sourceLocation)
        for point in reader.points {
            if let time = point.timestamp {
                #expect(isISO8601UTCMilliseconds(time), "time \(time)", sourceLocation: sourceLocation)
            }
            #expect(["2d", "3d", "dgps", "pps"].contains(point.fix ?? ""), "GPX fix \(point.fix ?? "none")",
                    sourceLocation: sourceLocation)
        }
        return reader.points.map { point in
            Record(timestamp: point.timestamp, latitude: point.latitude, longitude: point.longitude,
                   altitude: point.elevation, speed: nil, course: nil, fix: point.fix?.uppercased())
        }
    }

    private final class GPXReader: NSObject, XMLParserDelegate {
        struct Point {
            var latitude = Double.nan
            var longitude = Double.nan
            var elevation: Double?
            var timestamp: String?
            var fix: String?
        }

        var root: String?
        var version: String?
        var trackCount = 0
        var segmentCount = 0
        var points: [Point] = []
        var error: String?
        private var current: Point?
        private var text = ""

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
            if root == nil {
                root = elementName
                version = attributeDict["version"]
            }
            text = ""
            switch elementName {
            case "trk": trackCount += 1
            case "trkseg": segmentCount += 1
            case "trkpt":
                guard let lat = attributeDict["lat"].flatMap(Double.init), let lon = attributeDict["lon"].flatMap(Double.init)
                else {
                    error = "trkpt without numeric lat/lon: \(attributeDict)"
                    parser.abortParsing()
                    return
                }
                current = Point(latitude: lat, longitude: lon)
            default: break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
                    qualifiedName qName: String?) {
            switch elementName {
            case "ele":
                guard let value = Double(text) else {
                    error = "ele is not a number: \(text)"
                    parser.abortParsing()
                    return
                }
                current?.elevation = value
            case "time": current?.timestamp = text
            case "fix": current?.fix = text
            case "trkpt":
                if let current { points.append(current) }
                current = nil
            default: break
            }
            text = ""
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            error = error ?? "\(parseError)"
        }
    }
}

import FoundationEssentials

// One JSON form of a fix, written by `Codable` and by ``Location/jsonText`` alike (and so by whereami, the
// samples' logs, …): a flat object, times in gpsd's ISO 8601 with milliseconds. Documented in JSONSchema.md.

extension Location {
    /// The keys of a fix's JSON object, in the order ``jsonText`` writes them.
    package enum JSONKey: String, CodingKey, CaseIterable {
        case timestamp, latitude, longitude, altitude, ellipsoidalAltitude
        case horizontalAccuracy, verticalAccuracy, latitudeAccuracy, longitudeAccuracy
        case latitudeDeviation, longitudeDeviation, altitudeDeviation
        case baselineEast, baselineNorth, baselineUp, baselineLength, baselineCourse
        case speed, speedAccuracy, course, courseAccuracy, climb, fix, status, device
    }

    /// The fix as one line of JSON, without a newline: the same object `JSONEncoder` makes of it, with its
    /// keys in a fixed order and values left out when unknown. JSON has no NaN or infinity: a non-finite value
    /// (which no fix from gpsd has) is left out, and so is a timestamp with no calendar date (see
    /// ``GPSDTime/string(from:)``); a non-finite latitude or longitude is written `null`, so reading the line back
    /// fails rather than inventing a position.
    ///
    /// ```swift
    /// print(fix.jsonText)
    /// // {"timestamp":"2025-06-01T12:00:06.000Z","latitude":52.52180605,"longitude":13.4133957333,…,"fix":"3D","status":"gps"}
    /// let same = try JSONDecoder().decode(Location.self, from: Data(fix.jsonText.utf8))
    /// ```
    public var jsonText: String {
        // Written byte by byte into one buffer: once per fix on whereami's hot path, where joining a string per
        // field cost a quarter of a fix's instructions. The same text as `jsonFields` joined, which
        // LocationJSONTests.jsonTextIsItsFieldsJoined holds it to.
        var line = JSONLine()
        if let time = GPSDTime.string(from: timestamp) { line.string("timestamp", time) }
        line.coordinate("latitude", coordinate.latitude)
        line.coordinate("longitude", coordinate.longitude)
        forEachOptionalNumber { line.number($0, $1) }
        line.string("fix", fix.rawValue)
        line.string("status", status.rawValue)
        if let device { line.string("device", device) }
        return line.close()
    }

    /// The fields of ``jsonText``, in its order: each key, and its value as JSON text. Without latitude and
    /// longitude for a format that carries the position elsewhere (GeoJSON's geometry); for an object of one's
    /// own with a fix's values in it.
    ///
    /// ```swift
    /// let properties = fix.jsonFields(includingCoordinate: false).map { JSONText.quoted($0.key) + ":" + $0.value }
    /// print("{" + properties.joined(separator: ",") + "}")
    /// // {"timestamp":"2025-06-01T12:00:06.000Z","altitude":35.0,…,"fix":"3D","status":"gps"}
    /// ```
    public func jsonFields(includingCoordinate: Bool = true) -> [(key: String, value: String)] {
        var fields: [(key: String, value: String)] = []
        fields.reserveCapacity(JSONKey.allCases.count)
        forEachJSONField(includingCoordinate: includingCoordinate) { fields.append(($0, $1)) }
        return fields
    }

    /// Calls `body` with each field of ``jsonText``, in order: its key and its value as JSON text.
    private func forEachJSONField(includingCoordinate: Bool, _ body: (String, String) -> Void) {
        func number(_ key: JSONKey, _ value: Double?) {
            if let value, value.isFinite { body(key.rawValue, JSONText.number(value)) }
        }
        if let time = GPSDTime.string(from: timestamp) { body("timestamp", JSONText.quoted(time)) }
        if includingCoordinate {
            body("latitude", coordinate.latitude.isFinite ? JSONText.number(coordinate.latitude) : "null")
            body("longitude", coordinate.longitude.isFinite ? JSONText.number(coordinate.longitude) : "null")
        }
        forEachOptionalNumber(number)
        body("fix", JSONText.quoted(fix.rawValue))
        body("status", JSONText.quoted(status.rawValue))
        if let device { body("device", JSONText.quoted(device)) }
    }

    /// Calls `body` with each number of the object that may be unknown, in its order: the one list of them, for
    /// ``jsonText``, ``jsonFields(includingCoordinate:)`` and `encode(to:)` (an array of them, made per fix, cost
    /// whereami's line an allocation).
    private func forEachOptionalNumber(_ body: (JSONKey, Double?) throws -> Void) rethrows {
        try body(.altitude, altitude)
        try body(.ellipsoidalAltitude, ellipsoidalAltitude)
        try body(.horizontalAccuracy, horizontalAccuracy)
        try body(.verticalAccuracy, verticalAccuracy)
        try body(.latitudeAccuracy, latitudeAccuracy)
        try body(.longitudeAccuracy, longitudeAccuracy)
        try body(.latitudeDeviation, deviation?.latitude)
        try body(.longitudeDeviation, deviation?.longitude)
        try body(.altitudeDeviation, deviation?.altitude)
        try body(.baselineEast, baseline?.east)
        try body(.baselineNorth, baseline?.north)
        try body(.baselineUp, baseline?.up)
        try body(.baselineLength, baseline?.length)
        try body(.baselineCourse, baseline?.course)
        try body(.speed, speed)
        try body(.speedAccuracy, speedAccuracy)
        try body(.course, course)
        try body(.courseAccuracy, courseAccuracy)
        try body(.climb, climb)
    }

    /// Writes the flat object of ``jsonText``. A non-finite number, or a timestamp with no calendar date, cannot
    /// be written: it throws `EncodingError.invalidValue`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONKey.self)
        guard let time = GPSDTime.string(from: timestamp) else {
            // The seconds, not the Date: Foundation traps describing a Date of NaN, as the error's description would.
            throw EncodingError.invalidValue(timestamp.timeIntervalSince1970, .init(
                codingPath: container.codingPath + [JSONKey.timestamp], debugDescription: "the time has no calendar date"))
        }
        try container.encode(time, forKey: .timestamp)
        for (key, value) in [(JSONKey.latitude, coordinate.latitude), (.longitude, coordinate.longitude)] {
            try container.encode(try Self.finite(value, key, container.codingPath), forKey: key)
        }
        try forEachOptionalNumber { key, value in
            if let value { try container.encode(try Self.finite(value, key, container.codingPath), forKey: key) }
        }
        try container.encode(fix, forKey: .fix)
        try container.encode(status, forKey: .status)
        try container.encodeIfPresent(device, forKey: .device)
    }

    /// Reads the flat object of ``jsonText``. A value that cannot be true (latitude 91, a negative speed, a time
    /// that is not a calendar time from 1980 to 2099) throws `DecodingError.dataCorrupted` naming the key; a fix
    /// without a time, a latitude or a longitude throws `DecodingError.keyNotFound`. `fix` and `status` default to 3D and
    /// `gps` when absent.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        func number(_ key: JSONKey, _ range: ClosedRange<Double>) throws -> Double? {
            guard let value = try container.decodeIfPresent(Double.self, forKey: key) else { return nil }
            guard range.contains(value) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "\(value) is not a possible \(key.rawValue)")
            }
            return value
        }
        func required(_ key: JSONKey, _ range: ClosedRange<Double>) throws -> Double {
            guard let value = try number(key, range) else {
                throw DecodingError.keyNotFound(key, .init(codingPath: container.codingPath, debugDescription: "a fix needs its \(key.rawValue)"))
            }
            return value
        }
        func time() throws -> Date {
            let text = try container.decode(String.self, forKey: .timestamp)
            guard Plausibility.isCalendarTime(Substring(text)), let timestamp = GPSDTime.date(from: text),
                  Plausibility.isPlausible(timestamp) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .timestamp, in: container, debugDescription: "\(text) is not an ISO 8601 UTC time")
            }
            return timestamp
        }
        let latitudeDeviation = try number(.latitudeDeviation, Plausibility.positionError)
        let longitudeDeviation = try number(.longitudeDeviation, Plausibility.positionError)
        let altitudeDeviation = try number(.altitudeDeviation, Plausibility.positionError)
        let hasDeviation = latitudeDeviation != nil || longitudeDeviation != nil || altitudeDeviation != nil
        let baseline = Baseline(
            east: try number(.baselineEast, Plausibility.baselineComponent),
            north: try number(.baselineNorth, Plausibility.baselineComponent),
            up: try number(.baselineUp, Plausibility.baselineComponent),
            length: try number(.baselineLength, Plausibility.baselineLength),
            course: try number(.baselineCourse, Plausibility.course).map { $0 == 360 ? 0 : $0 })
        self.init(
            coordinate: .init(latitude: try required(.latitude, Plausibility.latitude),
                              longitude: try required(.longitude, Plausibility.longitude)),
            altitude: try number(.altitude, Plausibility.altitude),
            ellipsoidalAltitude: try number(.ellipsoidalAltitude, Plausibility.altitude),
            horizontalAccuracy: try number(.horizontalAccuracy, Plausibility.positionError),
            verticalAccuracy: try number(.verticalAccuracy, Plausibility.positionError),
            latitudeAccuracy: try number(.latitudeAccuracy, Plausibility.positionError),
            longitudeAccuracy: try number(.longitudeAccuracy, Plausibility.positionError),
            deviation: hasDeviation ? Deviation(latitude: latitudeDeviation, longitude: longitudeDeviation,
                                                altitude: altitudeDeviation) : nil,
            baseline: baseline == Baseline() ? nil : baseline,
            speed: try number(.speed, Plausibility.speed),
            speedAccuracy: try number(.speedAccuracy, Plausibility.speedError),
            course: try number(.course, Plausibility.course).map { $0 == 360 ? 0 : $0 },
            courseAccuracy: try number(.courseAccuracy, Plausibility.courseError),
            climb: try number(.climb, Plausibility.climb),
            timestamp: try time(),   // after the values, so that one that cannot be true is named first
            fix: try container.decodeIfPresent(Fix.self, forKey: .fix) ?? .threeDimensional,
            status: try container.decodeIfPresent(Status.self, forKey: .status) ?? .gps,
            device: try container.decodeIfPresent(String.self, forKey: .device)
        )
    }

    private static func finite(_ value: Double, _ key: JSONKey, _ path: [any CodingKey]) throws -> Double {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: path + [key], debugDescription: "JSON has no \(value)"))
        }
        return value
    }
}

/// ``Location/jsonText``'s line as it is written: bytes, one member after another.
private struct JSONLine {
    private var bytes: [UInt8]

    init() {
        bytes = []
        bytes.reserveCapacity(400)
        bytes.append(UInt8(ascii: "{"))
    }

    /// The object, closed.
    mutating func close() -> String {
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `"key":`, after a comma unless it is the first member.
    private mutating func key(_ key: StaticString) {
        key.withUTF8Buffer { self.key($0) }
    }

    /// `"key":` of a key's bytes, after a comma unless it is the first member.
    private mutating func key(_ key: UnsafeBufferPointer<UInt8>) {
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: key)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// A member whose value is `value`, as ``JSONText/number(_:)`` writes it, unless it is unknown or not finite.
    mutating func number(_ key: Location.JSONKey, _ value: Double?) {
        guard let value, value.isFinite else { return }
        var name = key.rawValue
        name.withUTF8 { self.key($0) }
        append(value)
    }

    /// A latitude or longitude: as a number, or `null` if it is not finite.
    mutating func coordinate(_ key: StaticString, _ value: Double) {
        self.key(key)
        if value.isFinite {
            append(value)
        } else {
            bytes.append(contentsOf: [UInt8(ascii: "n"), UInt8(ascii: "u"), UInt8(ascii: "l"), UInt8(ascii: "l")])
        }
    }

    /// A member whose value is `value` as ``JSONText/quoted(_:)`` writes it.
    mutating func string(_ key: StaticString, _ value: String) {
        self.key(key)
        var value = value
        let plain = value.withUTF8 { utf8 -> Bool in
            // Printable ASCII with nothing to escape, as a time, a fix's mode and a device path nearly always are.
            guard utf8.allSatisfy({ (0x20...0x7E).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
            else { return false }
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: utf8)
            bytes.append(UInt8(ascii: "\""))
            return true
        }
        if !plain { bytes.append(contentsOf: JSONText.quoted(value).utf8) }
    }

    /// A finite number as ``JSONText/number(_:)`` writes it.
    private mutating func append(_ value: Double) {
        guard value.rounded() == value && abs(value) < 1e15 else {
            var text = value.description
            text.withUTF8 { bytes.append(contentsOf: $0) }
            return
        }
        // A whole number: its digits and ".0" (and "-" for -0.0, as ``JSONText/number(_:)`` keeps it).
        let whole = Int64(value)
        if whole < 0 || (whole == 0 && value.sign == .minus) { bytes.append(UInt8(ascii: "-")) }
        var magnitude = whole.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[15 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            bytes.append(contentsOf: buffer[(16 - count)...])
        }
        bytes.append(UInt8(ascii: "."))
        bytes.append(UInt8(ascii: "0"))
    }
}

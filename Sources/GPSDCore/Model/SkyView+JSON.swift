import FoundationEssentials

// One JSON form of the satellites, written by `Codable` and by ``SkyView/jsonText`` alike (and so by
// `whereami --sky --format json`): the counts and the dilution of precision flat in one object, the satellites in
// an array, times in gpsd's ISO 8601 with milliseconds. Documented in JSONSchema.md.

extension SkyView {
    /// The keys of a sky view's JSON object, in the order ``jsonText`` writes them.
    package enum JSONKey: String, CodingKey, CaseIterable {
        case timestamp, device, visible, used, truncated, hdop, vdop, pdop, tdop, gdop, xdop, ydop, constellations
        case satellites
    }

    /// The view as one line of JSON, without a newline: the same object `JSONEncoder` makes of it, with its keys
    /// in a fixed order and values left out when unknown (a non-finite number too, and a timestamp with no
    /// calendar date, and `truncated` unless ``isTruncated``). The counts of each system (``constellations``) come
    /// before the satellites, each a ``Satellite/jsonText``.
    ///
    /// ```swift
    /// print(sky.jsonText)
    /// // {"visible":26,"used":10,"hdop":0.71,…,"constellations":[{"constellation":"GPS","visible":8,"used":5},…],
    /// //  "satellites":[{"constellation":"GPS","id":2,"prn":2,…},…]}
    /// let same = try JSONDecoder().decode(SkyView.self, from: Data(sky.jsonText.utf8))
    /// ```
    public var jsonText: String {
        var fields: [String] = []
        if let timestamp, let time = GPSDTime.string(from: timestamp) { fields.append("\"timestamp\":" + JSONText.quoted(time)) }
        if let device { fields.append("\"device\":" + JSONText.quoted(device)) }
        fields.append("\"visible\":\(visible)")
        fields.append("\"used\":\(used)")
        if isTruncated { fields.append("\"truncated\":true") }
        for (key, value) in dilutionFields {
            if let value, value.isFinite { fields.append("\"\(key.rawValue)\":" + JSONText.number(value)) }
        }
        fields.append("\"constellations\":[" + constellations.map(\.jsonText).joined(separator: ",") + "]")
        fields.append("\"satellites\":[" + satellites.map(\.jsonText).joined(separator: ",") + "]")
        return "{" + fields.joined(separator: ",") + "}"
    }

    private var dilutionFields: [(JSONKey, Double?)] {
        [(.hdop, dilution.horizontal), (.vdop, dilution.vertical), (.pdop, dilution.position),
         (.tdop, dilution.time), (.gdop, dilution.geometric), (.xdop, dilution.longitude),
         (.ydop, dilution.latitude)]
    }

    /// Writes the object of ``jsonText``. A non-finite number, or a timestamp with no calendar date, cannot be
    /// written: it throws `EncodingError.invalidValue`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONKey.self)
        if let timestamp {
            guard let time = GPSDTime.string(from: timestamp) else {
                throw EncodingError.invalidValue(timestamp.timeIntervalSince1970, .init(
                    codingPath: container.codingPath + [JSONKey.timestamp],
                    debugDescription: "the time has no calendar date"))
            }
            try container.encode(time, forKey: .timestamp)
        }
        try container.encodeIfPresent(device, forKey: .device)
        try container.encode(visible, forKey: .visible)
        try container.encode(used, forKey: .used)
        if isTruncated { try container.encode(true, forKey: .truncated) }
        for (key, value) in dilutionFields {
            guard let value else { continue }
            guard value.isFinite else {
                throw EncodingError.invalidValue(value, .init(
                    codingPath: container.codingPath + [key], debugDescription: "JSON has no \(value)"))
            }
            try container.encode(value, forKey: key)
        }
        try container.encode(constellations, forKey: .constellations)
        try container.encode(satellites, forKey: .satellites)
    }

    /// Reads the object of ``jsonText``. A count outside 0…255, a dilution outside 0…10,000 or a time that is not an
    /// ISO 8601 UTC time of 1980 to 2099 throws `DecodingError.dataCorrupted` naming the key; without `satellites`
    /// it throws `DecodingError.keyNotFound`. `visible` and `used` default to what the satellites list, `truncated`
    /// to `false`; `constellations` is not read, since it is counted from the satellites.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: JSONKey.self)
        func count(_ key: JSONKey) throws -> Int? {
            guard let value = try container.decodeIfPresent(Int.self, forKey: key) else { return nil }
            guard Plausibility.satellites.contains(value) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "\(value) is not a possible number of satellites")
            }
            return value
        }
        func factor(_ key: JSONKey) throws -> Double? {
            guard let value = try container.decodeIfPresent(Double.self, forKey: key) else { return nil }
            guard Plausibility.dilution.contains(value) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "\(value) is not a possible \(key.rawValue)")
            }
            return value
        }
        var timestamp: Date?
        if let text = try container.decodeIfPresent(String.self, forKey: .timestamp) {
            guard let date = GPSDTime.date(from: text), Plausibility.isPlausible(date) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .timestamp, in: container, debugDescription: "\(text) is not an ISO 8601 UTC time")
            }
            timestamp = date
        }
        self.init(
            satellites: try container.decode([Satellite].self, forKey: .satellites),
            visible: try count(.visible), used: try count(.used),
            dilution: DilutionOfPrecision(
                horizontal: try factor(.hdop), vertical: try factor(.vdop), position: try factor(.pdop),
                time: try factor(.tdop), geometric: try factor(.gdop), longitude: try factor(.xdop),
                latitude: try factor(.ydop)),
            timestamp: timestamp, device: try container.decodeIfPresent(String.self, forKey: .device),
            isTruncated: try container.decodeIfPresent(Bool.self, forKey: .truncated) ?? false)
    }
}

extension SkyView.ConstellationCount {
    /// The count as one JSON object, without a newline, as `JSONEncoder` makes it:
    /// `{"constellation":"Galileo","visible":5,"used":4}`.
    public var jsonText: String {
        "{\"constellation\":" + JSONText.quoted(constellation.rawValue) + ",\"visible\":\(visible),\"used\":\(used)}"
    }
}

extension Satellite {
    /// The satellite as one JSON object, without a newline: the same object `JSONEncoder` makes of it, with its
    /// keys in the order of its properties and values left out when unknown (a non-finite number too).
    ///
    /// ```swift
    /// print(satellite.jsonText)
    /// // {"constellation":"Galileo","id":11,"prn":311,"elevation":40.0,"azimuth":120.0,"signalStrength":38.0,"used":true}
    /// ```
    public var jsonText: String {
        var text = "{\"constellation\":" + JSONText.quoted(constellation.rawValue) + ",\"id\":\(id),\"prn\":\(prn)"
        for (key, value) in [("elevation", elevation), ("azimuth", azimuth), ("signalStrength", signalStrength)] {
            if let value, value.isFinite { text += ",\"\(key)\":" + JSONText.number(value) }
        }
        text += ",\"used\":\(isUsed)"
        if let health { text += ",\"health\":" + JSONText.quoted(health.rawValue) }
        return text + "}"
    }

    /// Reads the object of ``jsonText``, as ``Plausibility`` holds a SKY's satellite to it: a number outside
    /// 1…1023 (a PRN may be 0), an elevation beyond ±90°, an azimuth outside 0°…360° (360 is read as 0) or a
    /// C/N0 outside 0…254 dB-Hz throws `DecodingError.dataCorrupted` naming the key.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func number(_ key: CodingKeys, allowingZero: Bool) throws -> Int {
            let value = try container.decode(Int.self, forKey: key)
            guard Plausibility.satelliteNumber.contains(value) || allowingZero && value == 0 else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "\(value) names no satellite")
            }
            return value
        }
        func degrees(_ key: CodingKeys, _ range: ClosedRange<Double>) throws -> Double? {
            guard let value = try container.decodeIfPresent(Double.self, forKey: key) else { return nil }
            guard value.isFinite, range.contains(value) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "\(value) is not a possible \(key.stringValue)")
            }
            return value
        }
        self.init(
            constellation: try container.decode(Constellation.self, forKey: .constellation),
            id: try number(.id, allowingZero: false), prn: try number(.prn, allowingZero: true),
            elevation: try degrees(.elevation, Plausibility.elevation),
            azimuth: try degrees(.azimuth, Plausibility.azimuth).map { $0 == 360 ? 0 : $0 },
            signalStrength: try degrees(.signalStrength, Plausibility.signal),
            isUsed: try container.decode(Bool.self, forKey: .isUsed),
            health: try container.decodeIfPresent(Health.self, forKey: .health))
    }
}

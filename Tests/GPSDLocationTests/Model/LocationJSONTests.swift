import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// One JSON schema for a fix: `Codable` and `jsonText` (whereami's NDJSON, the samples' logs) write the same
/// flat object, and either reads back as the same `Location`.
@Suite("Location JSON schema")
struct LocationJSONTests {
    static let full = Location(
        coordinate: .init(latitude: -33.5, longitude: -70.25),
        altitude: 490.3, ellipsoidalAltitude: 520.1,
        horizontalAccuracy: 6.1, verticalAccuracy: 9.5, latitudeAccuracy: 4.5, longitudeAccuracy: 3.25,
        deviation: .init(latitude: 0.8, longitude: 0.6, altitude: 1.9),
        baseline: .init(east: 3.25, north: -1.5, up: 0.125, length: 3.58, course: 114.8),
        speed: 10, speedAccuracy: 0.5,
        course: 225, courseAccuracy: 4.25,
        climb: 0.1,
        timestamp: Date(timeIntervalSince1970: 1_748_779_205.25),
        fix: .threeDimensional, status: .rtkFixed, device: "/dev/ttyUSB0")

    private func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func theDocumentedKeysInTheDocumentedOrder() throws {
        let text = Self.full.jsonText
        #expect(text == #"{"timestamp":"2025-06-01T12:00:05.250Z","latitude":-33.5,"longitude":-70.25,"#
            + #""altitude":490.3,"ellipsoidalAltitude":520.1,"horizontalAccuracy":6.1,"verticalAccuracy":9.5,"#
            + #""latitudeAccuracy":4.5,"longitudeAccuracy":3.25,"latitudeDeviation":0.8,"longitudeDeviation":0.6,"#
            + #""altitudeDeviation":1.9,"baselineEast":3.25,"baselineNorth":-1.5,"baselineUp":0.125,"#
            + #""baselineLength":3.58,"baselineCourse":114.8,"speed":10.0,"speedAccuracy":0.5,"course":225.0,"courseAccuracy":4.25,"#
            + #""climb":0.1,"fix":"3D","status":"rtkFixed","device":"/dev/ttyUSB0"}"#)
    }

    /// `jsonText` writes its line byte by byte; `jsonFields` gives each member's text as ``JSONText`` writes it.
    /// Joined, they are the same text, whatever the values: whole, negative zero, huge, tiny, not finite, a
    /// device name to escape.
    @Test(arguments: [
        (0.0, -0.0, 1e15, -1e-7, "/dev/ttyUSB0"),
        (-0.0, 12, -1e20, .leastNonzeroMagnitude, "/dev/tty\"S0\u{1B}[2J\\ü"),
        (.nan, 1, 999_999_999_999_999, -42, ""),
        (90, .infinity, 0.1, 123_456_789.123_456_789, "\u{2028}"),
    ] as [(Double, Double, Double, Double, String)])
    func jsonTextIsItsFieldsJoined(latitude: Double, longitude: Double, altitude: Double, speed: Double, device: String) {
        let fix = Location(
            coordinate: .init(latitude: latitude, longitude: longitude), altitude: altitude,
            deviation: .init(latitude: speed, longitude: nil, altitude: -altitude),
            baseline: .init(east: speed, length: altitude), speed: speed, climb: -speed,
            timestamp: Date(timeIntervalSince1970: 1_748_779_205.25), fix: .twoDimensional, status: .dgps,
            device: device.isEmpty ? nil : device)
        let joined = "{" + fix.jsonFields().map { JSONText.quoted($0.key) + ":" + $0.value }.joined(separator: ",") + "}"
        #expect(fix.jsonText == joined)
    }

    @Test func codableAndJSONTextWriteTheSameObject() throws {
        let encoded = try object(JSONEncoder().encode(Self.full))
        let written = try object(Data(Self.full.jsonText.utf8))
        #expect(NSDictionary(dictionary: encoded).isEqual(to: written))
        #expect(encoded["timestamp"] as? String == "2025-06-01T12:00:05.250Z")
        #expect(encoded["coordinate"] == nil)
    }

    @Test func bothRoundTrip() throws {
        #expect(try JSONDecoder().decode(Location.self, from: JSONEncoder().encode(Self.full)) == Self.full)
        #expect(try JSONDecoder().decode(Location.self, from: Data(Self.full.jsonText.utf8)) == Self.full)
    }

    @Test func aSparseFixOmitsWhatIsUnknown() throws {
        let sparse = Location(coordinate: .init(latitude: 1.5, longitude: -2.25),
                              timestamp: Date(timeIntervalSince1970: 1_748_779_200), fix: .twoDimensional)
        #expect(sparse.jsonText
            == #"{"timestamp":"2025-06-01T12:00:00.000Z","latitude":1.5,"longitude":-2.25,"fix":"2D","status":"gps"}"#)
        let keys = Set(try object(JSONEncoder().encode(sparse)).keys)
        #expect(keys == ["timestamp", "latitude", "longitude", "fix", "status"])
        let decoded = try JSONDecoder().decode(Location.self, from: Data(sparse.jsonText.utf8))
        #expect(decoded == sparse && decoded.deviation == nil)
    }

    @Test func aFixWithoutATimeIsRefused() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Location.self, from: Data(#"{"latitude":1.5,"longitude":-2.25}"#.utf8))
        }
    }

    @Test func everyFixOfARealRecordingRoundTrips() async throws {
        // gpsd's own numbers (nine decimals, millisecond times), through jsonText and back.
        let gps = AsyncLocationManager(recording: Fixtures.url("gst.gpsd.json"), pace: .asFastAsPossible)
        var count = 0
        for try await fix in gps.updates(bufferingPolicy: .unbounded) {
            count += 1
            let decoded = try JSONDecoder().decode(Location.self, from: Data(fix.jsonText.utf8))
            #expect(decoded == fix, "\(fix.jsonText)")
        }
        #expect(count == 36)   // 20 epochs; 16 of them again, completed by their GST
    }

    @Test("impossible values are rejected, naming the key", arguments: [
        (#"{"latitude":91,"longitude":0}"#, "latitude"),
        (#"{"latitude":0,"longitude":-180.5}"#, "longitude"),
        (#"{"latitude":0,"longitude":0,"timestamp":"2025-13-01T12:00:00.000Z"}"#, "timestamp"),
        (#"{"latitude":0,"longitude":0,"timestamp":"yesterday"}"#, "timestamp"),
        (#"{"latitude":0,"longitude":0,"speed":-1}"#, "speed"),
        (#"{"latitude":0,"longitude":0,"horizontalAccuracy":-3}"#, "horizontalAccuracy"),
        (#"{"latitude":0,"longitude":0,"latitudeDeviation":-0.1}"#, "latitudeDeviation"),
        (#"{"latitude":0,"longitude":0,"course":361}"#, "course"),
    ])
    func impossibleValuesAreRejected(json: String, key: String) {
        do {
            _ = try JSONDecoder().decode(Location.self, from: Data(json.utf8))
            Issue.record("decoded \(json)")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.codingPath.last?.stringValue == key)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func aFixWithoutAPositionIsRejected() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Location.self, from: Data(#"{"longitude":0,"fix":"3D"}"#.utf8))
        }
    }

    @Test func aNonFiniteValueCannotBeEncoded() {
        var broken = Self.full
        broken.speed = .infinity
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(broken) }
        // jsonText cannot throw: it leaves the value out, and stays JSON.
        #expect(!broken.jsonText.contains("speed\""))
        #expect((try? JSONSerialization.jsonObject(with: Data(broken.jsonText.utf8))) != nil)
    }

    @Test func aNonFinitePositionIsWrittenAsNullAndNotReadBack() {
        var broken = Self.full
        broken.coordinate.latitude = .nan
        #expect(broken.jsonText.contains(#""latitude":null"#))
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Location.self, from: Data(broken.jsonText.utf8)) }
    }
}

import Foundation
import GPSDLocation
import Testing

/// One JSON schema for the satellites: `Codable` and `jsonText` (`whereami --sky --format json`) write the same
/// object, and either reads back as the same `SkyView`.
@Suite("SkyView JSON schema")
struct SkyViewJSONTests {
    static let full = SkyView(
        satellites: [
            Satellite(constellation: .gps, id: 2, prn: 2, elevation: 63, azimuth: 95,
                      signalStrength: 44, isUsed: true, health: .healthy),
            Satellite(constellation: .glonass, id: 24, prn: 88, elevation: 4, azimuth: 287, signalStrength: 0),
            Satellite(constellation: .beidou, id: 34, prn: 434, health: .unhealthy),
        ],
        visible: 4, used: 1,
        dilution: .init(horizontal: 0.71, vertical: 1.11, position: 1.32, time: 1.14, geometric: 2.2,
                        longitude: 0.59, latitude: 0.79),
        timestamp: Date(timeIntervalSince1970: 1_748_779_205.25), device: "/dev/ttyACM0")

    private func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func theDocumentedKeysInTheDocumentedOrder() {
        #expect(Self.full.jsonText == #"{"timestamp":"2025-06-01T12:00:05.250Z","device":"/dev/ttyACM0","#
            + #""visible":4,"used":1,"hdop":0.71,"vdop":1.11,"pdop":1.32,"tdop":1.14,"gdop":2.2,"xdop":0.59,"#
            + #""ydop":0.79,"constellations":[{"constellation":"GPS","visible":1,"used":1},"#
            + #"{"constellation":"BeiDou","visible":1,"used":0},{"constellation":"GLONASS","visible":1,"used":0}],"#
            + #""satellites":["#
            + #"{"constellation":"GPS","id":2,"prn":2,"elevation":63.0,"azimuth":95.0,"#
            + #""signalStrength":44.0,"used":true,"health":"healthy"},"#
            + #"{"constellation":"GLONASS","id":24,"prn":88,"elevation":4.0,"azimuth":287.0,"#
            + #""signalStrength":0.0,"used":false},"#
            + #"{"constellation":"BeiDou","id":34,"prn":434,"used":false,"health":"unhealthy"}]}"#)
    }

    @Test func theCountsOfEachSystemAreCountedFromTheSatellitesAndNotRead() throws {
        #expect(Self.full.constellations == [
            .init(constellation: .gps, visible: 1, used: 1), .init(constellation: .beidou, visible: 1, used: 0),
            .init(constellation: .glonass, visible: 1, used: 0),
        ])
        #expect(Self.full.count(for: .glonass) == SatelliteCount(visible: 1, used: 0))
        #expect(Self.full.count(for: .galileo) == SatelliteCount(visible: 0, used: 0))
        // Counts that disagree with the list are not read: the list is what can be checked.
        let text = #"{"constellations":[{"constellation":"Galileo","visible":9,"used":9}],"#
            + #""satellites":[{"constellation":"GPS","id":5,"prn":5,"used":true}]}"#
        let read = try JSONDecoder().decode(SkyView.self, from: Data(text.utf8))
        #expect(read.constellations == [.init(constellation: .gps, visible: 1, used: 1)])
    }

    @Test func codableAndJSONTextWriteTheSameObject() throws {
        let encoded = try object(JSONEncoder().encode(Self.full))
        let written = try object(Data(Self.full.jsonText.utf8))
        #expect(NSDictionary(dictionary: encoded).isEqual(to: written))
        #expect(encoded["timestamp"] as? String == "2025-06-01T12:00:05.250Z")
        #expect(encoded["dilution"] == nil, "the factors are flat in the object")
    }

    @Test func bothRoundTrip() throws {
        #expect(try JSONDecoder().decode(SkyView.self, from: JSONEncoder().encode(Self.full)) == Self.full)
        #expect(try JSONDecoder().decode(SkyView.self, from: Data(Self.full.jsonText.utf8)) == Self.full)
    }

    @Test func aSparseViewOmitsWhatIsUnknown() throws {
        let sparse = SkyView(satellites: [])
        #expect(sparse.jsonText == #"{"visible":0,"used":0,"constellations":[],"satellites":[]}"#)
        #expect(Set(try object(JSONEncoder().encode(sparse)).keys) == ["visible", "used", "constellations", "satellites"])
        #expect(try JSONDecoder().decode(SkyView.self, from: Data(sparse.jsonText.utf8)) == sparse)
    }

    @Test func countsDefaultToTheList() throws {
        let text = #"{"satellites":[{"constellation":"Galileo","id":11,"prn":311,"used":true},"#
            + #"{"constellation":"GPS","id":5,"prn":5,"used":false}]}"#
        let sky = try JSONDecoder().decode(SkyView.self, from: Data(text.utf8))
        #expect(sky.visible == 2 && sky.used == 1)
        #expect(sky.satellites.map(\.constellation) == [.galileo, .gps])
    }

    @Test func aNonFiniteValueIsLeftOutOfTheTextAndRefusedByTheEncoder() {
        var sky = Self.full
        sky.dilution.horizontal = .nan
        sky.satellites[0].elevation = .infinity
        #expect(!sky.jsonText.contains("hdop") && !sky.jsonText.contains("\"elevation\":inf"))
        #expect(sky.jsonText.contains(#""prn":2,"azimuth":95.0"#))
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(sky) }
    }

    @Test(arguments: [
        (#"{"visible":300,"satellites":[]}"#, "visible"),
        (#"{"used":-1,"satellites":[]}"#, "used"),
        (#"{"hdop":-0.5,"satellites":[]}"#, "hdop"),
        (#"{"timestamp":"yesterday","satellites":[]}"#, "timestamp"),
        (#"{"pdop":1e300,"satellites":[]}"#, "pdop"),
        (#"{"satellites":[{"constellation":"GPS","id":5,"prn":5,"elevation":91,"used":true}]}"#, "elevation"),
        (#"{"satellites":[{"constellation":"GPS","id":5,"prn":5,"azimuth":-1,"used":true}]}"#, "azimuth"),
        (#"{"satellites":[{"constellation":"GPS","id":5,"prn":5,"signalStrength":255,"used":true}]}"#, "signalStrength"),
        (#"{"satellites":[{"constellation":"GPS","id":0,"prn":5,"used":true}]}"#, "id"),
        (#"{"satellites":[{"constellation":"GPS","id":5,"prn":-3,"used":true}]}"#, "prn"),
    ])
    func anImpossibleValueIsRefusedByName(text: String, key: String) throws {
        let error = try #require(throws: DecodingError.self) {
            try JSONDecoder().decode(SkyView.self, from: Data(text.utf8))
        }
        guard case .dataCorrupted(let context) = error else {
            Issue.record("\(error)")
            return
        }
        #expect(context.codingPath.last?.stringValue == key)
    }

    @Test func anObjectWithoutSatellitesIsRefused() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(SkyView.self, from: Data(#"{"visible":3,"used":1}"#.utf8))
        }
    }

    @Test("a view read from JSON says at least as many are visible as it lists; its count used is as given")
    func countsAreAtLeastTheList() throws {
        let text = #"{"visible":1,"used":0,"satellites":[{"constellation":"GPS","id":5,"prn":5,"used":true},{"constellation":"Galileo","id":11,"prn":311,"azimuth":360,"used":false}]}"#
        let sky = try JSONDecoder().decode(SkyView.self, from: Data(text.utf8))
        // gpsd's count used comes from a GSA, which may be older than the list's marks: it is kept as sent.
        #expect(sky.visible == 2 && sky.used == 0)
        #expect(sky.satellites.last?.azimuth == 0, "360° is north, read as 0")
        #expect(Plausibility.impossibility(of: sky) == nil)
    }
}

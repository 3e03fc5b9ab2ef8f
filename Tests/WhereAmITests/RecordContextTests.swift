import Foundation
import GPSDCore
import GPSDLocation
import Testing
@testable import WhereAmICore

/// What whereami writes beside a fix (its age as written, the heading of its time), and CSV's columns: every
/// member JSON has, in a header that only grows at its end.
@Suite("whereami's records: CSV's columns, the age and the heading")
struct RecordContextTests {
    /// A fix with every value JSON has.
    static let full = Location(
        coordinate: .init(latitude: 52.5218, longitude: 13.4134), altitude: 36, ellipsoidalAltitude: 75.6,
        horizontalAccuracy: 17.1, verticalAccuracy: 29.9, latitudeAccuracy: 10.5, longitudeAccuracy: 9.9,
        deviation: .init(latitude: 0.8, longitude: 0.6, altitude: 1.9),
        baseline: .init(east: 3.2, north: -1.1, up: 0.05, length: 3.4, course: 109),
        speed: 13.66, speedAccuracy: 20.99, course: 41.4, courseAccuracy: 72.9, climb: 0.2,
        timestamp: Date(timeIntervalSince1970: 1_748_779_216), fix: .threeDimensional, status: .dgps,
        device: "/dev/ttyUSB0")

    static let context = RecordContext(
        age: .milliseconds(83), heading: Heading(trueHeading: 46.5, magneticHeading: 42.4, timestamp: full.timestamp))

    @Test("the CSV header keeps its first fifteen columns, then has every other member of the JSON object, then whereami's")
    func csvColumns() {
        #expect(Array(CSVWriter.columns.prefix(15)) == [
            "timestamp", "latitude", "longitude", "altitude", "ellipsoidalAltitude", "horizontalAccuracy",
            "verticalAccuracy", "speed", "speedAccuracy", "course", "courseAccuracy", "climb", "fix", "status", "device",
        ], "the columns whereami has always written, where they were")
        let json = Location.JSONKey.allCases.map(\.rawValue)
        #expect(Set(CSVWriter.columns).isSuperset(of: json), "missing: \(Set(json).subtracting(CSVWriter.columns))")
        #expect(Array(CSVWriter.columns.suffix(3)) == ["age", "heading", "magneticHeading"])
        #expect(CSVWriter.columns.count == json.count + 3 && Set(CSVWriter.columns).count == CSVWriter.columns.count)
    }

    @Test("a CSV row holds what the JSON line holds, cell for member; what JSON leaves out is an empty cell")
    func csvCellsAreJSONMembers() async throws {
        let sparse = Location(coordinate: .init(latitude: 1, longitude: 2), timestamp: Self.full.timestamp, fix: .twoDimensional)
        for (fix, context) in [(Self.full, Self.context), (sparse, RecordContext())] {
            var json = OutputFormat.json.makeWriter(streaming: true)
            var csv = OutputFormat.csv.makeWriter(streaming: true)
            let line = json.record(fix, context)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let rows = try await Formats.csvRows(csv.header + csv.record(fix, context))
            try #require(rows.count == 2 && rows[0] == CSVWriter.columns, "\(rows)")
            for (column, cell) in zip(rows[0], rows[1]) {
                switch object[column] {
                case nil: #expect(cell == "", "\(column): empty, as JSON leaves it out: \(line)")
                case let text as String: #expect(cell == text, "\(column)")
                case let value: #expect(Double(cell) == Formats.number(value), "\(column): \(cell) and \(line)")
                }
            }
            #expect(Set(object.keys).isSubset(of: CSVWriter.columns), "every member has its column: \(line)")
        }
    }

    @Test("JSON and GeoJSON carry the age (seconds, to the millisecond) and the heading; the line still decodes as a Location")
    func jsonCarriesContext() throws {
        var json = OutputFormat.json.makeWriter(streaming: true)
        let line = json.record(Self.full, Self.context)
        #expect(line.hasSuffix(#","status":"dgps","device":"/dev/ttyUSB0","age":0.083,"heading":46.5,"magneticHeading":42.4}"# + "\n"),
                "\(line)")
        #expect(try JSONDecoder().decode(Location.self, from: Data(line.utf8)) == Self.full)
        var bare = OutputFormat.json.makeWriter(streaming: true)
        #expect(bare.record(Self.full, RecordContext()) == Self.full.jsonText + "\n", "nothing known, nothing added")

        var geo = OutputFormat.geojson.makeWriter(streaming: true)
        let document = geo.header + geo.record(Self.full, Self.context) + geo.footer
        let collection = try #require(try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any])
        let feature = try #require((collection["features"] as? [[String: Any]])?.first)
        let properties = try #require(feature["properties"] as? [String: Any])
        #expect(Formats.number(properties["age"]) == 0.083 && Formats.number(properties["heading"]) == 46.5)
    }

    @Test("the heading is the fix's if its time is within the window of the fix's, either way; else, or without a time, none")
    func headingOfTheFixTime() {
        let fix = Self.full
        func heading(at offset: Double?) -> Heading {
            Heading(trueHeading: 10, timestamp: offset.map { fix.timestamp.addingTimeInterval($0) })
        }
        let window = Duration.seconds(5)
        #expect(RecordContext(fix: fix, heading: heading(at: 0), window: window).heading == heading(at: 0))
        #expect(RecordContext(fix: fix, heading: heading(at: -5), window: window).heading == heading(at: -5))
        #expect(RecordContext(fix: fix, heading: heading(at: 1), window: window).heading == heading(at: 1))
        #expect(RecordContext(fix: fix, heading: heading(at: -5.001), window: window).heading == nil, "too old")
        #expect(RecordContext(fix: fix, heading: heading(at: 6), window: window).heading == nil, "of a later epoch")
        #expect(RecordContext(fix: fix, heading: heading(at: nil), window: window).heading == nil, "of no known time")
        #expect(RecordContext(fix: fix, heading: nil, window: window).heading == nil)
    }

    /// The evidence's records: `"heading":34.15,"magneticHeading":30.049999999999997` in JSON and GeoJSON, and
    /// `…,69.67,65.57000000000001` in CSV. gpsd's heading and variation, decoded, are written at their precision.
    @Test("a magnetic heading made of gpsd's heading and variation is written at their precision in JSON, GeoJSON and CSV",
          arguments: [("34.15", "30.05"), ("69.67", "65.57")])
    func magneticHeadingAtItsPrecision(heading: String, magnetic: String) async throws {
        let decoder = try ReportDecoder()
        let tpv = #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2025-06-01T12:00:16.000Z","lat":52.5218,"#
            + #""lon":13.4134,"altHAE":75.6,"altMSL":36.0,"track":41.4,"magvar":4.1,"speed":13.66}"#
        guard case .fix(let fix) = decoder.decode(Array(tpv.utf8)),
              case .attitude(let decoded, _) = decoder.decode(Array(#"{"class":"ATT","device":"/dev/pts/1","heading":\#(heading)}"#.utf8))
        else { Issue.record("a fix, then a heading"); return }
        let context = RecordContext(fix: fix, heading: decoded, window: .seconds(5))
        try #require(context.heading != nil)

        var json = OutputFormat.json.makeWriter(streaming: true)
        let line = json.record(fix, context)
        #expect(line.hasSuffix(#""heading":\#(heading),"magneticHeading":\#(magnetic)}"# + "\n"), "\(line)")

        var geo = OutputFormat.geojson.makeWriter(streaming: true)
        let feature = geo.record(fix, context)
        #expect(feature.hasSuffix(#""heading":\#(heading),"magneticHeading":\#(magnetic)}}"#), "\(feature)")

        var csv = OutputFormat.csv.makeWriter(streaming: true)
        let row = csv.record(fix, context)
        #expect(row.hasSuffix(",\(heading),\(magnetic)\n"), "\(row)")
        let rows = try await Formats.csvRows(csv.header + row)
        #expect(rows.last?.last == magnetic)
    }

    @Test("the age is the fix's as the record is made; unknown without an arrival")
    func ageAsWritten() throws {
        #expect(RecordContext(fix: Self.full, heading: nil, window: .seconds(5)).age == nil, "a fix no manager made")
        var fix = Self.full
        let arrived = ContinuousClock.now.advanced(by: .seconds(-2))
        fix.arrival = Location.Arrival(instant: arrived, date: .now, delay: .milliseconds(500))
        let age = try #require(RecordContext(fix: fix, heading: nil, window: .seconds(5)).age)
        #expect(age >= .milliseconds(2500), "measured 0.5 s before it arrived, 2 s ago: \(age)")
        fix.arrival?.delay = nil
        #expect(RecordContext(fix: fix, heading: nil, window: .seconds(5)).age == nil, "a held fix of unknown age")
    }
}

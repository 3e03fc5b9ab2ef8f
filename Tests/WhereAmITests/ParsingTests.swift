import ArgumentParser
import Foundation
import GPSDLocation
import Testing
@testable import whereami

/// The command line, parsed in-process without running anything; and the pieces that need no gpsd.
@Suite("whereami's command line and writers, in-process")
struct ParsingTests {
    @Test("no arguments: one text fix from localhost within 30 s")
    func defaults() throws {
        let command = try WhereAmI.parse([])
        #expect(command.server == nil)
        #expect(command.timeout == 30)
        #expect(command.maxAge == nil && command.accuracy == nil)
        #expect(!command.follow && command.count == nil && command.distance == nil && command.interval == nil)
        #expect(command.format == .text)
        #expect(command.replay == nil && !command.demo && command.speed == 1 && !command.quiet)
    }

    @Test("a full --follow command line")
    func followOptions() throws {
        let command = try WhereAmI.parse([
            "-f", "--count", "5", "--distance", "2.5", "--interval", "0", "--format", "gpx", "-q",
            "--timeout", "0.5", "--accuracy", "10", "--max-age", "0", "rover.local:2948:/dev/ttyACM0",
        ])
        #expect(command.follow && command.quiet)
        #expect(command.count == 5 && command.distance == 2.5 && command.interval == 0)
        #expect(command.format == .gpx)
        #expect(command.timeout == 0.5 && command.accuracy == 10 && command.maxAge == 0)
        #expect(command.server == "rover.local:2948:/dev/ttyACM0")
    }

    @Test("every format by name", arguments: ["text", "json", "csv", "geojson", "gpx"])
    func formats(name: String) throws {
        let command = try WhereAmI.parse(["--format", name])
        #expect(command.format.rawValue == name)
    }

    @Test("replays: --demo, --replay FILE, --speed")
    func replays() throws {
        let demo = try WhereAmI.parse(["--demo", "--speed", "0", "--follow"])
        #expect(demo.demo && demo.speed == 0 && demo.follow && demo.replay == nil)
        let replay = try WhereAmI.parse(["--replay", "trip.json", "--speed", "4"])
        #expect(replay.replay == "trip.json" && replay.speed == 4 && !replay.demo)
        let ipv6 = try WhereAmI.parse(["[::1]:2947"])
        #expect(ipv6.server == "[::1]:2947")
    }

    @Test("invalid command lines throw, as usage errors (exit 64)", arguments: [
        ["--bogus"], ["--format", "xml"], ["--count", "0", "--follow"], ["--count", "3"], ["--interval", "1"],
        ["--distance", "1"], ["host:99999"], ["host:0"], ["[::1"], ["::1"], [""], ["--timeout", "-1"],
        ["--timeout=-1"], ["--timeout", "0"], ["--timeout", "inf"], ["--timeout", "nan"], ["--max-age=-1"],
        ["--accuracy", "0"], ["--accuracy", "nan"], ["--distance=-1", "--follow"], ["--interval=-1", "--follow"],
        ["--speed=-1"], ["--speed", "inf"], ["--demo", "--replay", "x.json"], ["--demo", "localhost"],
        ["--replay", "x.json", "localhost"], ["a", "b"], ["--follow", "--count", "many"],
    ] as [[String]])
    func invalid(arguments: [String]) throws {
        let error = try #require(throws: (any Error).self) { try WhereAmI.parse(arguments) }
        #expect(WhereAmI.exitCode(for: error) == .validationFailure, "exit 64 for \(arguments): \(error)")
        #expect(!WhereAmI.message(for: error).isEmpty)
    }

    @Test("the exit status of each LocationError code")
    func exitStatuses() {
        let cases: [(LocationError.Code, Int32)] = [
            (.gpsdUnavailable, 69), (.connectionLost, 69), (.timedOut, 75), (.locationUnknown, 75),
            (.invalidRecording, 66), (.protocolError, 76),
        ]
        for (code, status) in cases {
            #expect(WhereAmI.exitStatus(for: LocationError(code, "test")) == status, "\(code)")
        }
    }

    // MARK: Writers, on fixes gpsd's fixtures never produce

    static let awkward = Location(
        coordinate: .init(latitude: -33.856784, longitude: -0.000001), altitude: 1e-7, ellipsoidalAltitude: -0.0,
        horizontalAccuracy: 1e15, speed: 0, course: 359.99999, climb: -1.5,
        timestamp: Date(timeIntervalSince1970: 1_748_779_205.1), fix: .threeDimensional, status: .rtkFixed,
        device: "/dev/\"odd\",name\\with\n<xml & csv>\u{1}chars")

    @Test("JSON escapes the device and writes numbers JSONSerialization reads back exactly")
    func jsonRoundTrip() throws {
        var writer = OutputFormat.json.makeWriter(streaming: true)
        let text = writer.header + writer.record(Self.awkward) + writer.footer
        #expect(text.hasSuffix("\n") && text.dropLast().firstIndex(of: "\n") == nil, "one line: \(text)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["device"] as? String == Self.awkward.device)
        #expect(Formats.number(object["latitude"]) == -33.856784)
        #expect(Formats.number(object["longitude"]) == -0.000001)
        #expect(Formats.number(object["altitude"]) == 1e-7)
        #expect(Formats.number(object["horizontalAccuracy"]) == 1e15)
        #expect(Formats.number(object["course"]) == 359.99999)
        #expect(object["verticalAccuracy"] == nil && object["speedAccuracy"] == nil, "absent values are left out")
        #expect(object["status"] as? String == "rtkFixed")
    }

    @Test("timestamps are ISO 8601 UTC, rounded to the millisecond (12:00:05.1 is .100, not .099)")
    func timestampMilliseconds() {
        let base = 1_748_779_205.0   // 2025-06-01T12:00:05Z
        for tenth in 0..<10 {
            let date = Date(timeIntervalSince1970: base + Double(tenth) / 10)
            #expect(Field.timestamp(date) == "2025-06-01T12:00:05.\(tenth)00Z")
        }
        #expect(Field.timestamp(Date(timeIntervalSince1970: base + 0.0004)) == "2025-06-01T12:00:05.000Z")
        #expect(Field.timestamp(Date(timeIntervalSince1970: base + 0.0996)) == "2025-06-01T12:00:05.100Z")
    }

    @Test("CSV quotes the device so Python's csv module reads back the same cells")
    func csvRoundTrip() async throws {
        var writer = OutputFormat.csv.makeWriter(streaming: true)
        let text = writer.header + writer.record(Self.awkward) + writer.record(Self.awkward) + writer.footer
        let rows = try await Formats.csvRows(text)
        try #require(rows.count == 3, "\(rows)")
        #expect(rows[0] == CSVWriter.columns)
        let cells = Dictionary(uniqueKeysWithValues: zip(rows[0], rows[1]))
        #expect(cells["device"] == Self.awkward.device)
        #expect(cells["verticalAccuracy"] == "", "absent values are empty cells")
        #expect(rows[1] == rows[2])
    }

    @Test("GPX escapes the device; XMLParser reads the document and its point")
    func gpxEscapes() throws {
        var writer = OutputFormat.gpx.makeWriter(streaming: true)
        let plain = Location(coordinate: .init(latitude: 1, longitude: 2), timestamp: Date(timeIntervalSince1970: 0),
                             fix: .twoDimensional, device: "a & <b>")
        let text = writer.header + writer.record(Self.awkward) + writer.record(plain) + writer.footer
        // U+0001 cannot appear in XML 1.0 at all, escaped or not; leave it out of this check.
        let withoutControl = text.replacingOccurrences(of: "\u{1}", with: "")
        let records = try Formats.gpxRecords(withoutControl)
        try #require(records.count == 2)
        #expect(records[1].latitude == 1 && records[1].longitude == 2 && records[1].altitude == nil)
        #expect(records[1].timestamp == "1970-01-01T00:00:00.000Z")
        #expect(records[0].fix == "DGPS", "RTK is GPX's dgps")
    }

    @Test("GeoJSON: an empty stream is an empty FeatureCollection; points are [lon, lat(, alt)]")
    func geoJSONShapes() throws {
        let empty = OutputFormat.geojson.makeWriter(streaming: true)
        #expect(try Formats.geoJSONRecords(empty.header + empty.footer).isEmpty)
        var writer = OutputFormat.geojson.makeWriter(streaming: true)
        let flat = Location(coordinate: .init(latitude: 48.1, longitude: 11.5), timestamp: .now, fix: .twoDimensional)
        let text = writer.header + writer.record(Self.awkward) + writer.record(flat) + writer.footer
        let records = try Formats.geoJSONRecords(text)
        try #require(records.count == 2)
        #expect(records[0].latitude == -33.856784 && records[0].longitude == -0.000001 && records[0].altitude == 1e-7)
        #expect(records[1].latitude == 48.1 && records[1].longitude == 11.5 && records[1].altitude == nil)
    }
}

import ArgumentParser
import Foundation
import GPSDLocation
import Testing
@testable import WhereAmICore

/// The command line, parsed in-process without running anything; and the pieces that need no gpsd.
@Suite("whereami's command line and writers, in-process")
struct ParsingTests {
    @Test("no arguments: one text fix from localhost within 30 s")
    func defaults() throws {
        let command = try WhereAmI.parse([])
        #expect(command.connection.server == nil)
        #expect(command.request.timeout == nil && command.request.firstFixTimeout == Seconds(30))
        #expect(command.preflight().timeout == .seconds(30))
        #expect(command.request.maxAge == nil && command.request.accuracy == nil)
        let request = command.request
        #expect(!request.follow && request.count == nil && request.distance == nil && request.interval == nil)
        #expect(command.output.format == .text && !command.output.quiet)
        #expect(command.connection.replay == nil && !command.connection.demo && command.connection.speed == nil)
    }

    @Test("a full --follow command line")
    func followOptions() throws {
        let command = try WhereAmI.parse([
            "-f", "--count", "5", "--distance", "2.5", "--interval", "0", "--format", "gpx", "-q",
            "--timeout", "0.5", "--accuracy", "10", "--max-age", "0", "rover.local:2948:/dev/ttyACM0",
        ])
        #expect(command.request.follow && command.output.quiet)
        #expect(command.request.count == 5 && command.request.distance == 2.5 && command.request.interval == 0)
        #expect(command.output.format == .gpx)
        #expect(command.request.timeout == Seconds(0.5) && command.request.accuracy == 10)
        #expect(command.request.maxAge == Seconds(0))
        #expect(command.connection.server == GPSDServer(host: "rover.local", port: 2948, device: "/dev/ttyACM0"))
    }

    @Test("--follow without --timeout waits for gpsd and its first fix as long as it takes", arguments: [
        ["--follow"], ["-f", "localhost"], ["--follow", "--count", "3"], ["--demo", "-f"],
    ] as [[String]])
    func followWaitsWithoutLimit(arguments: [String]) throws {
        let command = try WhereAmI.parse(arguments)
        #expect(command.request.timeout == nil)
        #expect(command.request.firstFixTimeout.isUnlimited)
        #expect(command.preflight().timeout == AsyncLocationManager.noTimeout)
    }

    @Test("--timeout given bounds the wait, one fix or --follow", arguments: [
        (["--timeout", "5"], Duration.seconds(5)), (["--follow", "--timeout", "5"], .seconds(5)),
        (["-f", "--timeout=0.25"], .milliseconds(250)), (["--follow", "--timeout", "inf"], AsyncLocationManager.noTimeout),
    ] as [([String], Duration)])
    func explicitTimeout(arguments: [String], duration: Duration) throws {
        let command = try WhereAmI.parse(arguments)
        #expect(command.request.firstFixTimeout.duration == duration)
        #expect(command.preflight().timeout == duration)
    }

    @Test("every format by name", arguments: ["text", "json", "csv", "geojson", "gpx"])
    func formats(name: String) throws {
        let command = try WhereAmI.parse(["--format", name])
        #expect(command.output.format.rawValue == name)
    }

    @Test("replays: --demo, --replay FILE, --speed")
    func replays() throws {
        let demo = try WhereAmI.parse(["--demo", "--speed", "0", "--follow"])
        #expect(demo.connection.demo && demo.connection.speed == 0 && demo.request.follow)
        #expect(demo.connection.replay == nil)
        let replay = try WhereAmI.parse(["--replay", "trip.json", "--speed", "4"])
        #expect(replay.connection.replay == "trip.json" && replay.connection.speed == 4 && !replay.connection.demo)
        let ipv6 = try WhereAmI.parse(["[::1]:2947"])
        #expect(ipv6.connection.server == GPSDServer(host: "::1", port: 2947))
    }

    @Test("invalid command lines throw, as usage errors (exit 64)", arguments: [
        ["--bogus"], ["--format", "xml"], ["--count", "0", "--follow"], ["--count", "3"], ["--interval", "1"],
        ["--distance", "1"], ["host:99999"], ["host:0"], ["[::1"], ["::1"], [""], ["--timeout", "-1"],
        ["--timeout=-1"], ["--timeout", "0"], ["--timeout", "nan"], ["--timeout", "-inf"], ["--max-age=-1"],
        ["--max-age", "-1"], ["--accuracy", "0"], ["--accuracy", "nan"], ["--accuracy", "inf"],
        ["--distance=-1", "--follow"], ["--interval=-1", "--follow"], ["--speed=-1", "--demo"],
        ["--speed", "inf", "--demo"], ["--speed", "2"], ["--demo", "--replay", "x.json"], ["--demo", "localhost"],
        ["--replay", "x.json", "localhost"], ["a", "b"], ["--follow", "--count", "many"], [":::"], ["[::1]:"],
        ["localhost:"],
    ] as [[String]])
    func invalid(arguments: [String]) throws {
        let error = try #require(throws: (any Error).self) { try WhereAmI.parse(arguments) }
        #expect(WhereAmI.exitCode(for: error) == .validationFailure, "exit 64 for \(arguments): \(error)")
        #expect(!WhereAmI.message(for: error).isEmpty)
    }

    // MARK: The edges of the architecture issue

    @Test("huge durations are accepted and mean no limit, without trapping", arguments: [
        (["--timeout=1e20"], "timeout"), (["--timeout", "1e300"], "timeout"), (["--timeout", "inf"], "timeout"),
        (["--timeout", "never"], "timeout"), (["--max-age=1e300"], "max-age"), (["--max-age", "inf"], "max-age"),
    ] as [([String], String)])
    func hugeDurations(arguments: [String], option: String) throws {
        let command = try WhereAmI.parse(arguments)
        let seconds = try #require(option == "timeout" ? command.request.timeout : command.request.maxAge)
        #expect(seconds.duration == .never)
        #expect(seconds.isUnlimited)
    }

    @Test("ordinary durations convert exactly")
    func ordinaryDurations() throws {
        #expect(try WhereAmI.parse(["--timeout", "2.5"]).request.timeout?.duration == .seconds(2.5))
        #expect(try WhereAmI.parse(["--max-age", "0"]).request.maxAge?.duration == .zero)
    }

    @Test("a negative number after a space is rejected as negative, not read as a missing value", arguments: [
        (["--timeout", "-1"], "--timeout must be a positive number"),
        (["--max-age", "-1"], "--max-age must be zero or more"),
        (["--count", "-3", "--follow"], "--count must be at least 1"),
        (["--distance", "-1", "--follow"], "--distance must be zero or more"),
        (["--speed", "-2", "--demo"], "--speed must be 0 (as fast as possible) or a factor of at least 0.001"),
    ] as [([String], String)])
    func negativeValues(arguments: [String], message: String) throws {
        let error = try #require(throws: (any Error).self) { try WhereAmI.parse(arguments) }
        #expect(WhereAmI.message(for: error).contains(message), "\(WhereAmI.message(for: error))")
        #expect(!WhereAmI.message(for: error).contains("Missing value"))
    }

    @Test("--speed without --replay or --demo is an error, not ignored")
    func speedWithoutReplay() throws {
        let error = try #require(throws: (any Error).self) { try WhereAmI.parse(["--speed", "2"]) }
        #expect(WhereAmI.message(for: error).contains("--speed goes with --replay or --demo"))
    }

    @Test("`whereami help` prints the help, as the help says and the completions offer it")
    func helpWord() throws {
        let error = try #require(throws: (any Error).self) { try WhereAmI.parse(["help"]) }
        #expect(WhereAmI.exitCode(for: error) == .success)
        #expect(WhereAmI.fullMessage(for: error).contains("USAGE: whereami"))
    }

    @Test("an invalid server says what is wrong with it")
    func invalidServerReason() throws {
        let error = try #require(throws: (any Error).self) { try WhereAmI.parse(["host:99999"]) }
        #expect(WhereAmI.message(for: error).contains("'99999' is not a port from 1 to 65535"))
    }

    @Test("--quiet's help says errors still go to standard error")
    func quietHelp() {
        #expect(WhereAmI.helpMessage(columns: 500).contains("Print no status on standard error (errors are still printed there)"))
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

    @Test("CSV quotes the device so Python's csv module reads back the same cells, its control characters replaced")
    func csvRoundTrip() async throws {
        var writer = OutputFormat.csv.makeWriter(streaming: true)
        let text = writer.header + writer.record(Self.awkward) + writer.record(Self.awkward) + writer.footer
        let rows = try await Formats.csvRows(text)
        try #require(rows.count == 3, "\(rows)")
        #expect(rows[0] == CSVWriter.columns)
        let cells = Dictionary(uniqueKeysWithValues: zip(rows[0], rows[1]))
        #expect(cells["device"] == "/dev/\"odd\",name\\with\u{FFFD}<xml & csv>\u{FFFD}chars")
        #expect(cells["verticalAccuracy"] == "", "absent values are empty cells")
        #expect(rows[1] == rows[2])
    }

    @Test("GPX escapes the device; XMLParser reads the document and its point")
    func gpxEscapes() throws {
        var writer = OutputFormat.gpx.makeWriter(streaming: true)
        let plain = Location(coordinate: .init(latitude: 1, longitude: 2), timestamp: Date(timeIntervalSince1970: 0),
                             fix: .twoDimensional, device: "a & <b>")
        let text = writer.header + writer.record(Self.awkward) + writer.record(plain) + writer.footer
        let records = try Formats.gpxRecords(text)
        try #require(records.count == 2)
        #expect(records[1].latitude == 1 && records[1].longitude == 2 && records[1].altitude == nil)
        #expect(records[1].timestamp == "1970-01-01T00:00:00.000Z")
        #expect(records[0].fix == "DGPS", "RTK is GPX's dgps")
    }

    @Test("GeoJSON: an empty stream is an empty FeatureCollection; points are [lon, lat(, height above the ellipsoid)]")
    func geoJSONShapes() throws {
        let empty = OutputFormat.geojson.makeWriter(streaming: true)
        #expect(try Formats.geoJSONRecords(empty.header + empty.footer).isEmpty)
        var writer = OutputFormat.geojson.makeWriter(streaming: true)
        let flat = Location(coordinate: .init(latitude: 48.1, longitude: 11.5), timestamp: .now, fix: .twoDimensional)
        let raised = Location(coordinate: .init(latitude: 52.5, longitude: 13.4), altitude: 36, ellipsoidalAltitude: 75.6,
                              timestamp: .now, fix: .threeDimensional)
        // Above sea level only: RFC 7946 §4's third coordinate is height above the ellipsoid, so it is left out.
        let seaLevelOnly = Location(coordinate: .init(latitude: 1, longitude: 2), altitude: 12.5, timestamp: .now,
                                    fix: .threeDimensional)
        let text = writer.header + writer.record(Self.awkward) + writer.record(flat) + writer.record(raised)
            + writer.record(seaLevelOnly) + writer.footer
        let records = try Formats.geoJSONRecords(text)
        try #require(records.count == 4)
        #expect(records[0].latitude == -33.856784 && records[0].longitude == -0.000001 && records[0].height == 0)
        #expect(records[0].altitude == 1e-7, "the height above sea level stays a property")
        #expect(records[1].latitude == 48.1 && records[1].longitude == 11.5 && records[1].height == nil)
        #expect(records[2].height == 75.6 && records[2].altitude == 36)
        #expect(records[3].height == nil && records[3].altitude == 12.5)
        #expect(text.contains(#""coordinates":[13.4,52.5,75.6]"#) && text.contains(#""coordinates":[2.0,1.0]}"#), "\(text)")
    }
}

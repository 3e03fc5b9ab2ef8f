import Foundation
import GPSDTestSupport
import Testing

extension WhereAmIProcessTests {
    /// `whereami` as a process against a real gpsd (gpsfake): what it prints, in every format.
    @Suite("whereami against a real gpsd: output", .enabled(if: GPSFake.isAvailable), .timeLimit(.minutes(1)))
    struct LiveOutputTests {
        // MARK: One fix

        @Test("one-shot --format json -q prints one epoch of the log as one JSON line and exits 0")
        func oneShotJSON() async throws {
            let track = try ExpectedTrack("moving")
            try await withGPSFake("moving.nmea", once: false) { fake in
                let result = try await whereami("--format", "json", "-q", fake.server)
                #expect(result.stderr.isEmpty, "--quiet: nothing on stderr, got \(result.stderr)")
                guard await requireLive(result.status == 0 && !result.endedBySignal && result.stdoutLines.count == 1,
                                        "exit 0 after one line: \(result)", fake: fake) else { return }
                #expect(result.stdout.hasSuffix("}\n"))
                let record = try Formats.jsonRecord(result.stdoutLines[0])
                expectRecord(record, isAnEpochOf: track)
            }
        }

        @Test("one-shot text (the default) exits 0 and shows the fix's latitude, longitude and time")
        func oneShotText() async throws {
            let track = try ExpectedTrack("moving")
            try await withGPSFake("moving.nmea", once: false) { fake in
                let result = try await whereami(fake.server)
                guard await requireLive(result.status == 0 && !result.endedBySignal, "exit 0: \(result)", fake: fake)
                else { return }
                #expect(result.stderr.contains("asking gpsd at \(fake.server)"), "status on stderr: \(result.stderr)")
                let rows = Formats.textBlock(result.stdout)
                let latitude = try #require(Formats.hemisphereDegrees(rows["Latitude"]), "a Latitude row: \(result.stdout)")
                let longitude = try #require(Formats.hemisphereDegrees(rows["Longitude"]), "a Longitude row: \(result.stdout)")
                #expect(rows["Fix"]?.hasPrefix("3D") == true, "Fix row: \(rows["Fix"] ?? "none")")
                let record = Record(timestamp: rows["Time"], latitude: latitude, longitude: longitude)
                expectRecord(record, isAnEpochOf: track, carries: [])
            }
        }

        @Test("one-shot --max-age 5: exit 0, one epoch of the log")
        func oneShotMaxAge() async throws {
            let track = try ExpectedTrack("moving")
            try await withGPSFake("moving.nmea", once: false) { fake in
                // A first client starts the log; once it has its fix, gpsd holds one. The log's dates are far from
                // gpsd's clock, so the held fix's age is unknown and the fix printed is the next live one
                // (MaxAgeTests has held fixes of known and unknown age).
                let first = try await whereami("--format", "json", "-q", fake.server)
                guard await requireLive(first.status == 0, "a first fix: \(first)", fake: fake) else { return }

                let result = try await whereami("--max-age", "5", "--format", "json", "-q", fake.server)
                guard await requireLive(result.status == 0 && !result.endedBySignal && result.stdoutLines.count == 1,
                                        "exit 0 after one line: \(result)", fake: fake) else { return }
                // The epoch whole (OneFixTests shows it is not its first report); compared as every format is.
                expectRecord(try Formats.jsonRecord(result.stdoutLines[0]), isAnEpochOf: track, carries: [.motion])
            }
        }

        // MARK: NDJSON stream

        @Test("--follow --count 20 --format json: 20 NDJSON lines, the log's first 20 fixes, in order, then exit 0")
        func followTwentyJSON() async throws {
            let track = try ExpectedTrack("moving")
            try await withGPSFake("moving.nmea", cycle: 0.02, once: true) { fake in
                let result = try await whereami("--follow", "--count", "20", "--format", "json", "-q", fake.server)
                #expect(result.status == 0 && !result.endedBySignal, "\(result)")
                #expect(result.stderr.isEmpty, "--quiet: \(result.stderr)")
                let lines = result.stdout.components(separatedBy: "\n")
                #expect(lines.last == "", "every line ends with a newline")
                try #require(lines.count == 21, "20 lines: \(result)")
                let records = try lines.dropLast().map { try Formats.jsonRecord($0) }
                expectInOrder(records, of: track)
                #expect(records.map(\.timestamp) == Array(track.times.prefix(20)), "the log's first 20 epochs, none skipped")
            }
        }

        @Test("a 2D fix has no altitude key in --format json; a 3D fix has one")
        func twoDimensionalJSON() async throws {
            let track = try ExpectedTrack("twod")
            // Looping: the next loop's first epoch closes the log's last one (whereami writes an epoch once it is
            // whole), so the count is reached without waiting for gpsd to go away.
            try await withGPSFake("twod.nmea", cycle: 0.02, once: false) { fake in
                let count = track.fixes.count
                let result = try await whereami("--follow", "--count", "\(count)", "--format", "json", "-q", fake.server)
                #expect(result.status == 0 && !result.endedBySignal, "\(result)")
                let lines = result.stdoutLines
                try #require(lines.count == count, "\(count) lines: \(result)")
                let records = try lines.map { try Formats.jsonRecord($0) }
                expectWholeTrack(records, equals: track)
                for (line, record) in zip(lines, records) {
                    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                    if record.fix == "2D" {
                        #expect(object["altitude"] == nil, "2D: no altitude key in \(line)")
                    } else {
                        #expect(object["altitude"] != nil, "3D: an altitude in \(line)")
                    }
                }
                #expect(records.contains { $0.fix == "2D" } && records.contains { $0.fix == "3D" })
            }
        }

        @Test("timestamps keep their milliseconds: a 10 Hz receiver's 12:00:00.100 is printed as .100Z")
        func tenHertzMilliseconds() async throws {
            let track = try ExpectedTrack("tenhz")
            try await withGPSFake("tenhz.nmea", cycle: 0.02, once: true) { fake in
                let result = try await whereami("--follow", "--count", "12", "--format", "json", "-q", fake.server)
                #expect(result.status == 0 && !result.endedBySignal, "\(result)")
                let records = try result.stdoutLines.map { try Formats.jsonRecord($0) }
                try #require(records.count == 12, "\(result)")
                // gpsd may send an epoch again when a later sentence adds a value (its first report can be a 2D fix
                // without altitude): compare each epoch's last line, and the epochs' times with the receiver's.
                var epochs: [Record] = []
                for record in records {
                    if record.timestamp == epochs.last?.timestamp { epochs[epochs.count - 1] = record } else { epochs.append(record) }
                }
                let times = epochs.map { $0.timestamp ?? "-" }
                #expect(times == Array(track.times.prefix(times.count)),
                        "each printed time is the receiver's, to the millisecond, in order")
                for record in epochs {
                    expectRecord(record, isAnEpochOf: track)
                }
            }
        }

        // MARK: Every format, read back by a real parser

        /// `whereami --follow --count N --format FORMAT -q` against `moving.nmea` played once from its first sentence.
        private func followMoving(format: String, count: Int = 5) async throws -> CLIResult {
            return try await withGPSFake("moving.nmea", cycle: 0.02, once: true) { fake in
                let result = try await whereami("--follow", "--count", "\(count)", "--format", format, "-q", fake.server)
                #expect(result.status == 0 && !result.endedBySignal, "\(result)")
                #expect(result.stderr.isEmpty, "--quiet: \(result.stderr)")
                return result
            }
        }

        @Test("--format json: N lines, each a JSON object JSONSerialization reads")
        func formatJSON() async throws {
            let track = try ExpectedTrack("moving")
            let result = try await followMoving(format: "json")
            let records = try result.stdoutLines.map { try Formats.jsonRecord($0) }
            #expect(records.count == 5, "\(result)")
            expectInOrder(records, of: track)
        }

        @Test("--format geojson: a FeatureCollection of N Points at [lon, lat, height above the ellipsoid], read by JSONSerialization")
        func formatGeoJSON() async throws {
            let track = try ExpectedTrack("moving")
            let result = try await followMoving(format: "geojson")
            let records = try Formats.geoJSONRecords(result.stdout)
            #expect(records.count == 5, "\(result)")
            expectInOrder(records, of: track)
            // moving.nmea's GGA puts the geoid 17.0 m above the ellipsoid: gpsd's altHAE is altMSL + 17.
            for record in records where record.fix == "3D" {
                let (height, altitude) = (try #require(record.height, "\(record)"), try #require(record.altitude))
                #expect(abs(height - altitude - 17) < 1e-3, "\(record): height \(height)")
            }
            #expect(records.contains { $0.fix == "3D" }, "\(records)")
        }

        @Test("--format csv: a header and N rows of the same columns, read by Python's csv module")
        func formatCSV() async throws {
            let track = try ExpectedTrack("moving")
            let result = try await followMoving(format: "csv")
            let records = try await Formats.csvRecords(result.stdout)
            #expect(records.count == 5, "\(result)")
            expectInOrder(records, of: track)
        }

        @Test("--format gpx: a GPX 1.1 document with N trkpts, read by XMLParser")
        func formatGPX() async throws {
            let track = try ExpectedTrack("moving")
            let result = try await followMoving(format: "gpx")
            #expect(result.stdout.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"))
            let records = try Formats.gpxRecords(result.stdout)
            #expect(records.count == 5, "\(result)")
            expectInOrder(records, of: track, carries: [.altitude, .fix])
        }

        @Test("--format text with --follow: one line per fix with time, coordinate, altitude, speed, course, fix")
        func formatText() async throws {
            let track = try ExpectedTrack("moving")
            let result = try await followMoving(format: "text")
            let records = try result.stdoutLines.map { try Formats.textLineRecord($0) }
            #expect(records.count == 5, "\(result)")
            // Printed with 7 decimals (latitude, longitude), 1 (altitude, course) and 2 (speed).
            for record in records {
                expectRecord(record, isAnEpochOf: track, carries: [.fix])
                if let index = track.index(of: record.timestamp) {
                    let want = track.fixes[index]
                    #expect(record.altitude.map { abs($0 - (want.altitudeMSL ?? .nan)) <= 0.051 } == true, "\(record)")
                    #expect(record.speed.map { abs($0 - (want.speed ?? .nan)) <= 0.0051 } == true, "\(record)")
                    #expect(record.course.map { abs($0 - (want.course ?? .nan)) <= 0.051 } == true, "\(record)")
                }
            }
            expectInOrder(records, of: track, carries: [.fix])
        }
    }
}

import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

extension WhereAmIProcessTests {
    /// What the options do to the fixes printed, on the bundled drive replayed 50 times faster than recorded
    /// (paced, so every fix reaches the output), and one fix in every format.
    @Suite("whereami's options on the bundled drive", .timeLimit(.minutes(1)))
    struct OptionTests {
        private func drive(_ options: [String]) async throws -> [Record] {
            let result = try await whereami(["--demo", "--speed", "50", "--format", "json", "-q"] + options)
            #expect(result.status == 0 && !result.endedBySignal, "\(result)")
            return try result.stdoutLines.map { try Formats.jsonRecord($0) }
        }

        private static func seconds(_ timestamp: String?) -> Double {
            guard let timestamp,
                  let date = try? Date(timestamp, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
            else { return .nan }
            return date.timeIntervalSince1970
        }

        private static func location(_ record: Record) -> Location {
            Location(coordinate: .init(latitude: record.latitude, longitude: record.longitude))
        }

        private static func location(_ fix: ExpectedFix) -> Location {
            Location(coordinate: .init(latitude: fix.latitude, longitude: fix.longitude))
        }

        @Test("--accuracy 20: the one fix printed is at least that accurate (the drive's first is ±1900 m)")
        func accuracy() async throws {
            let track = try ExpectedTrack("drive")
            let result = try await whereami("--demo", "--speed", "0", "--accuracy", "20", "--format", "json", "-q")
            #expect(result.status == 0, "\(result)")
            let line = try #require(result.stdoutLines.first)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let accuracy = try #require(Formats.number(object["horizontalAccuracy"]), "\(line)")
            #expect(accuracy <= 20)
            let record = try Formats.jsonRecord(line)
            expectRecord(record, isAnEpochOf: track)
            #expect(record.timestamp != track.fixes.first?.time, "not the first, inaccurate fix")
        }

        @Test("--follow --interval 10 --count 5: five fixes 10 s of fix time apart")
        func interval() async throws {
            let track = try ExpectedTrack("drive")
            let records = try await drive(["--follow", "--interval", "10", "--count", "5"])
            try #require(records.count == 5)
            expectInOrder(records, of: track)
            #expect(records.first?.timestamp == track.fixes.first?.time, "the first fix is printed")
            let times = records.map { Self.seconds($0.timestamp) }
            for (earlier, later) in zip(times, times.dropFirst()) {
                #expect(later - earlier >= 10 && later - earlier < 11, "\(later - earlier) s apart (one fix a second)")
            }
        }

        @Test("--follow --interval 10 through a time that steps back (the drive recorded twice): both passes thinned alike")
        func intervalAfterTimeStepsBack() async throws {
            let track = try ExpectedTrack("drive")
            let once = try Data(contentsOf: ReplayTests.bundledRecording)
            let result = try await withScratchDirectory("interval") { directory in
                let twice = directory.appendingPathComponent("twice.gpsd.json")
                try (once + once).write(to: twice)
                return try await whereami(
                    "--replay", twice.path, "--speed", "0", "--follow", "--interval", "10", "--format", "json", "-q")
            }
            #expect(result.status == 0 && !result.endedBySignal, "\(result)")
            let records = try result.stdoutLines.map { try Formats.jsonRecord($0) }
            let times = records.map { Self.seconds($0.timestamp) }
            // The second pass starts where time steps back; each pass is thinned on its own.
            let restart = try #require(times.indices.dropFirst().first { times[$0] < times[$0 - 1] },
                                       "the second pass is printed: \(records.map { $0.timestamp ?? "-" })")
            let (first, second) = (Array(records[..<restart]), Array(records[restart...]))
            #expect(first.first?.timestamp == track.fixes.first?.time && first.count > 5, "\(first.count) fixes")
            #expect(second.map(\.timestamp) == first.map(\.timestamp), "the same fixes from the same recording")
            expectInOrder(first, of: track)
            expectInOrder(second, of: track)
            for pass in [first, second] {
                let passTimes = pass.map { Self.seconds($0.timestamp) }
                #expect(zip(passTimes, passTimes.dropFirst()).allSatisfy { $1 - $0 >= 10 }, "\(passTimes)")
            }
        }

        @Test("--follow --distance 50 --count 5: each fix the first at least 50 m from the one printed before")
        func distance() async throws {
            let track = try ExpectedTrack("drive")
            let records = try await drive(["--follow", "--distance", "50", "--count", "5"])
            try #require(records.count == 5)
            expectInOrder(records, of: track)
            for (earlier, later) in zip(records, records.dropFirst()) {
                let gap = Self.location(later).distance(from: Self.location(earlier))
                #expect(gap >= 50, "\(earlier.timestamp ?? "-") → \(later.timestamp ?? "-"): \(gap) m")
                // The epoch before `later` was still within 50 m of `earlier`, or it would have been printed.
                if let index = track.index(of: later.timestamp), index > 0 {
                    let before = track.fixes[index - 1]
                    #expect(Self.location(before).distance(from: Self.location(earlier)) < 50.5,
                            "\(before.time) was within 50 m of \(earlier.timestamp ?? "-")")
                }
            }
        }

        @Test("one fix in each document format is a complete document", arguments: ["csv", "geojson", "gpx"])
        func oneFixDocuments(format: String) async throws {
            let track = try ExpectedTrack("drive")
            let result = try await whereami("--demo", "--speed", "0", "--format", format, "-q")
            #expect(result.status == 0 && !result.endedBySignal, "\(result)")
            let records: [Record]
            var carries = Carries.all
            switch format {
            case "csv": records = try await Formats.csvRecords(result.stdout)
            case "geojson": records = try Formats.geoJSONRecords(result.stdout)
            default:
                records = try Formats.gpxRecords(result.stdout)
                carries = [.altitude, .fix]
            }
            try #require(records.count == 1, "\(result)")
            expectRecord(records[0], isAnEpochOf: track, carries: carries)
        }

        @Test("the stream reports each status change on stderr, satellites included, unless --quiet")
        func status() async throws {
            let result = try await whereami("--demo", "--speed", "50", "--follow", "--count", "3")
            #expect(result.status == 0, "\(result)")
            #expect(result.stderr.contains("replaying drive.gpsd.json at 50.0×"), "\(result.stderr)")
            let lines = result.stderr.split(separator: "\n").map(String.init)
            for expected in ["whereami: connecting", "whereami: connected to gpsd 3.22", "whereami: fix 3D gps"] {
                #expect(lines.contains(expected), "\(expected): \(result.stderr)")
            }
            #expect(lines.contains { $0.wholeMatch(of: /whereami: waiting for a fix \(\d+ of \d+ satellites used\)/) != nil },
                    "\(result.stderr)")
            #expect(result.stdoutLines.count == 3)
            #expect(!result.stdout.contains("satellites") && !result.stdout.contains("connect"), "status stays off stdout")

            let quiet = try await whereami("--demo", "--speed", "50", "--follow", "--count", "3", "-q")
            #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet)")
        }
    }
}

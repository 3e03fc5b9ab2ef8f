import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

extension SampleTests {
    @Suite("TelemetryLogger")
    struct TelemetryLoggerTests {
        /// A status line of the log: `{"event":"status","at":…,"state":…,"message":…}`, as JSONSchema.md
        /// ("Status lines beside fixes") describes it.
        struct StatusLine: Decodable { var event: String; var at: String; var state: String; var message: String }

        enum Line { case fix(Location), status(StatusLine) }

        /// The states JSONSchema.md lists for a status line: `LocationStatus.name`s and the log's own.
        static let documentedStates: Set<String> = [
            "connecting", "connected", "noDevice", "waitingForFix", "fix", "fixLost", "deviceGone", "stale",
            "reconnecting", "stopped", "started", "failed", "closed",
        ]

        /// Every line parsed as JSONSchema.md tells a reader to: a line with an `event` key is a status line of
        /// the documented form (its four keys in order, nothing else), and is no `Location`; any other line is a
        /// fix in the library's schema. A line that is neither (a torn one) fails the test.
        static func parse(_ lines: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> [Line] {
            try lines.filter { !$0.isEmpty }.map { line in
                let data = Data(line.utf8)
                let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any],
                                          "a JSON object: \(line)", sourceLocation: sourceLocation)
                guard object["event"] != nil else { return .fix(try JSONDecoder().decode(Location.self, from: data)) }
                let status = try JSONDecoder().decode(StatusLine.self, from: data)
                #expect(Set(object.keys) == ["event", "at", "state", "message"]
                            && line.wholeMatch(of: /\{"event":"status","at":"[^"]*","state":"[^"]*","message":".*"\}/) != nil,
                        "the documented keys, in order: \(line)", sourceLocation: sourceLocation)
                #expect(status.at.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil,
                        "ISO 8601 UTC with milliseconds: \(line)", sourceLocation: sourceLocation)
                #expect(documentedStates.contains(status.state), "a documented state: \(line)",
                        sourceLocation: sourceLocation)
                #expect(!status.message.isEmpty, "\(line)", sourceLocation: sourceLocation)
                #expect(throws: DecodingError.self, "a status line is no fix: \(line)", sourceLocation: sourceLocation) {
                    try JSONDecoder().decode(Location.self, from: data)
                }
                return .status(status)
            }
        }

        @Test("every line of a replay's log is a fix that decodes as a Location or a status line of the documented form")
        func everyLineDecodes() async throws {
            try await withScratchDirectory("telemetry-lines") { scratch in
                let result = try await Sample.start("TelemetryLogger", [
                    "--replay", Sample.recording.path, "--speed", "0", "--directory", scratch.path,
                ]).finish(deadline: .seconds(60))
                #expect(result.status == 0, "\(result)")
                let lines = try Self.parse(Sample.lines(in: scratch))
                let fixes = lines.compactMap { line -> Location? in if case .fix(let fix) = line { fix } else { nil } }
                let states = lines.compactMap { line -> String? in if case .status(let s) = line { s.state } else { nil } }
                let expected = try ExpectedFix.load("drive.expected.json")
                #expect(fixes.map(\.timestamp) == expected.map(\.date), "every epoch of the drive, once")
                #expect(states.first == "started" && states.last == "closed", "\(states)")
                #expect(states.contains("connected") && states.contains("fix"), "\(states)")
                // The documented states are the ones JSONSchema.md lists.
                let schema = try String(contentsOf: Fixtures.directory.deletingLastPathComponent().deletingLastPathComponent()
                    .appendingPathComponent("Sources/GPSDLocation/Docs.docc/JSONSchema.md"), encoding: .utf8)
                let row = try #require(schema.split(separator: "\n").first { $0.hasPrefix("| `state` |") })
                for state in Self.documentedStates {
                    #expect(row.contains("`\(state)`"), "JSONSchema.md lists \(state)")
                }
            }
        }

        @Test("through a gpsd restart: one line per epoch, nothing missed, status lines; SIGTERM closes the log whole")
        func survivesARestartAndSIGTERM() async throws {
            let port = freeLoopbackPort()
            try #require(port != 0)
            try await withScratchDirectory("telemetry") { scratch in
                let logs = scratch.appendingPathComponent("logs")
                // Started before any gpsd: it keeps trying until one comes.
                let process = try await Sample.start("TelemetryLogger", ["--directory", logs.path, "127.0.0.1:\(port)"])
                for (range, awaited) in [(0..<20, 8), (100..<120, 108)] {
                    let log = try Sample.log("epochs-\(range.lowerBound)", fixes: Array(range), in: scratch)
                    try await GPSFake.run(logs: [log], cycle: 0.05, once: true, lingerAfterEnd: 60, waitForClient: true,
                                          port: port) { fake in
                        let logged = await Sample.waitForFiles(in: logs) { $0.contains { $0.contains(Sample.time(awaited)) } }
                        if !logged { Issue.record("no fix of \(Sample.time(awaited)) in the log; \(await fake.diagnosis())") }
                        try #require(logged)
                    }   // killed here, halfway through its log
                }
                let reconnecting = await Sample.waitForFiles(in: logs) {
                    $0.last { $0.contains(#""event":"status""#) }?.contains(#""state":"reconnecting""#) ?? false
                }
                #expect(reconnecting, "the second gpsd gone: \(Sample.lines(in: logs).suffix(3))")
                process.terminate()
                let result = await process.finish(deadline: .seconds(20))
                #expect(result.status == 0 && !result.endedBySignal, "\(result)")

                let files = try FileManager.default.contentsOfDirectory(atPath: logs.path)
                for name in files {
                    let text = try String(contentsOf: logs.appendingPathComponent(name), encoding: .utf8)
                    #expect(text.hasSuffix("}\n"), "\(name) ends with a whole line")
                }
                let lines = try Self.parse(Sample.lines(in: logs))
                let times = lines.compactMap { line -> Date? in if case .fix(let fix) = line { fix.timestamp } else { nil } }
                let seconds = times.map { Int($0.timeIntervalSince(NMEA.Track.start).rounded()) }
                // One line per epoch, in order; from each gpsd, every epoch from its first logged to its last.
                #expect(seconds == seconds.sorted() && Set(seconds).count == seconds.count, "\(seconds)")
                let first = seconds.filter { $0 < 100 }, second = seconds.filter { $0 >= 100 }
                #expect(first.contains(8) && second.contains(108), "\(seconds)")
                #expect(first == Array((first.first ?? 0)...(first.last ?? -1)), "no epoch missed: \(first)")
                #expect(second == Array((second.first ?? 0)...(second.last ?? -1)), "no epoch missed: \(second)")
                for case .fix(let fix) in lines {
                    let second = Int(fix.timestamp.timeIntervalSince(NMEA.Track.start).rounded())
                    #expect(abs(fix.coordinate.longitude - Sample.longitude(second)) < 1e-6 && fix.fix == .threeDimensional)
                    #expect(fix.altitude != nil && fix.speed != nil, "the epoch's complete record: \(fix.jsonText)")
                }
                // What a restart looks like in the log: connected, fixes, reconnecting, connected, fixes again.
                let states = lines.compactMap { line -> String? in if case .status(let s) = line { s.state } else { nil } }
                var story: [String] = []   // the states that tell it, each run of one told once
                for state in states where ["connected", "fix", "reconnecting", "started", "closed"].contains(state)
                    && story.last != state { story.append(state) }
                #expect(story.first == "started" && story.last == "closed", "\(states)")
                #expect(story.drop { $0 != "connected" }.prefix(5) == ["connected", "fix", "reconnecting", "connected", "fix"],
                        "\(states)")
            }
        }

        @Test("SIGTERM while gpsd holds the last epoch open: that epoch is logged too, every one once, and the log closed")
        func sigtermLosesNothing() async throws {
            try await withScratchDirectory("telemetry-sigterm") { scratch in
                let logs = scratch.appendingPathComponent("logs")
                let log = try Sample.log("ten", fixes: Array(0..<10), in: scratch)
                try await GPSFake.run(logs: [log], cycle: 0.05, once: true, lingerAfterEnd: 60, waitForClient: true) { fake in
                    let process = try await Sample.start("TelemetryLogger", ["--directory", logs.path, fake.server])
                    // Epoch 8 is written when epoch 9 (the log's last) reaches the logger, which then holds 9 open:
                    // gpsd sends nothing more that would end it; the stop passes it on.
                    let logged = await Sample.waitForFiles(in: logs) { $0.contains { $0.contains(Sample.time(8)) } }
                    if !logged { Issue.record("no fix of \(Sample.time(8)) in the log; \(await fake.diagnosis())") }
                    process.terminate()
                    let result = await process.finish(deadline: .seconds(20))
                    #expect(result.status == 0 && !result.endedBySignal, "\(result)")
                }
                let lines = try Self.parse(Sample.lines(in: logs))
                let seconds = lines.compactMap { line -> Int? in
                    guard case .fix(let fix) = line else { return nil }
                    return Int(fix.timestamp.timeIntervalSince(NMEA.Track.start).rounded())
                }
                #expect(seconds == Array(0..<10), "every epoch once, the open one included: \(seconds)")
                guard case .status(let last) = lines.last else { Issue.record("the log ends with its closing line"); return }
                #expect(last.state == "closed")
            }
        }

        @Test("the README's command, replaying the drive as fast as possible, writes the same log on every run")
        func theReadmeCommandWritesTheSameOnEveryRun() async throws {
            var logs: [[String]] = []
            for run in 1...5 {
                try await withScratchDirectory("telemetry-run\(run)") { scratch in
                    let result = try await Sample.start("TelemetryLogger", [
                        "--replay", Sample.recording.path, "--speed", "0", "--directory", scratch.path,
                    ]).finish(deadline: .seconds(60))
                    #expect(result.status == 0, "\(result)")
                    // All but when each status line was written, by this machine's clock.
                    logs.append(Sample.lines(in: scratch).map {
                        $0.replacing(/"at":"[^"]*",/, with: "")
                    })
                }
            }
            let fixes = logs[0].filter { $0.hasPrefix(#"{"timestamp""#) }
            #expect(fixes.count == (try ExpectedFix.load("drive.expected.json")).count, "every epoch of the drive")
            for (run, log) in logs.enumerated().dropFirst() {
                #expect(log == logs[0], "run \(run + 1) differs from the first")
            }
        }

        @Test("--max-bytes rotates before a file would pass it; every epoch of the drive is in the files once")
        func rotatesBySize() async throws {
            try await withScratchDirectory("telemetry-rotation") { scratch in
                let result = try await Sample.start("TelemetryLogger", [
                    "--replay", Sample.recording.path, "--speed", "0", "--max-bytes", "4096", "--directory", scratch.path,
                ]).finish(deadline: .seconds(60))
                #expect(result.status == 0, "\(result)")
                let names = try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted()
                #expect(names.count > 5, "\(names)")
                for name in names {
                    let size = try FileManager.default.attributesOfItem(atPath: scratch.appendingPathComponent(name).path)[.size] as? Int
                    #expect((size ?? .max) <= 4096, "\(name): \(size ?? -1) bytes")
                    #expect(name.hasPrefix("telemetry-") && name.hasSuffix(".ndjson"))
                }
                let fixes = try Self.parse(Sample.lines(in: scratch)).compactMap { line -> Location? in
                    if case .fix(let fix) = line { fix } else { nil }
                }
                let expected = try ExpectedFix.load("drive.expected.json")
                #expect(fixes.map { $0.timestamp } == expected.map { $0.date })
            }
        }
    }
}

import Foundation
import GPSDTestSupport
import Testing

extension WhereAmIProcessTests {
    /// `--follow` as a pipeline stage: each fix reaches the reader as it comes, and SIGINT/SIGTERM end the
    /// stream with a complete document and status 0.
    @Suite("whereami --follow in a pipe, and its signals", .enabled(if: GPSFake.isAvailable), .timeLimit(.minutes(1)))
    struct StreamingTests {
        // gpsfake plays moving.nmea with one epoch per 0.3 s (three sentences at 0.1 s), looping.

        private static func count(_ text: String, in output: String) -> Int {
            output.components(separatedBy: text).count - 1
        }

        private enum Signal: String { case SIGINT, SIGTERM }

        /// Sends `signal` and waits for the end: it ends a stream, soon, with status 0.
        private static func end(
            _ process: CLIProcess, by signal: Signal, sourceLocation: SourceLocation = #_sourceLocation
        ) async -> CLIResult {
            let sent = ContinuousClock.now
            switch signal {
            case .SIGINT: process.interrupt()
            case .SIGTERM: process.terminate()
            }
            let result = await process.finish(deadline: .seconds(30))
            #expect(result.status == 0 && !result.endedBySignal, "\(signal) ends a stream with status 0: \(result)",
                    sourceLocation: sourceLocation)
            #expect(sent.duration(to: result.ended) < .seconds(20), "ends (a bound only a hang breaks)",
                    sourceLocation: sourceLocation)
            return result
        }

        @Test("--follow --format json into a pipe: each line arrives while whereami still runs; SIGINT then exits 0")
        func linesArriveAsFixesCome() async throws {
            // Five epochs played once; then gpsd stays up and silent. What reaches the pipe before the SIGINT was
            // written through as it came: a buffered whereami would show nothing (the lines are far under a
            // buffer), and nothing else (an exit, more fixes) could push it out. whereami writes an epoch once it is
            // whole: as its last report arrives once the receiver's epochs have shown how many make one, else when
            // the next begins; so the first four are awaited, and the fifth (written now, or at the signal) is
            // waited for before the signal, so that gpsd has sent it.
            let times = (0..<5).map(RestartTests.time)
            try await withScratchDirectory("follow") { directory in
                let log = try RestartTests.log(0..<5, in: directory)
                try await GPSFake.run(logs: [log], cycle: 0.05, once: true, lingerAfterEnd: 60, waitForClient: true) { fake in
                    let process = try await startWhereAmI(["--follow", "--format", "json", "-q", fake.server])

                    let four = await process.waitForOutput(timeout: .seconds(30)) { $0.contains(times[3]) }
                    #expect(process.isRunning, "written through while running, not buffered until exit")
                    guard await requireLive(four, "the first four epochs' lines", fake: fake, process: process) else { return }
                    let early = try process.stdoutSoFar.split(separator: "\n").map { try Formats.jsonRecord(String($0)).timestamp }
                    #expect(early.count >= 4 && early == Array(times.prefix(early.count)), "each epoch once, in order: \(early)")
                    _ = await process.waitForOutput(timeout: .seconds(30)) { $0.contains(times[4]) }

                    let result = await Self.end(process, by: .SIGINT)
                    #expect(result.stdout.hasSuffix("\n"), "no half-written line")
                    let all = try result.stdoutLines.map { try Formats.jsonRecord($0) }
                    #expect(all.map(\.timestamp) == times, "the held fifth epoch is written at the signal: \(result.stdout)")
                    #expect(all.allSatisfy { $0.latitude == 52.5 }, "\(result.stdout)")
                }
            }
        }

        @Test("--follow --format gpx, SIGTERM after the 2nd trkpt: exit 0 and a complete GPX document")
        func gpxEndsOnSIGTERM() async throws {
            let track = try ExpectedTrack("moving")
            try await withGPSFake("moving.nmea", cycle: 0.1, once: false) { fake in
                let process = try await startWhereAmI(["--follow", "--format", "gpx", fake.server])

                let two = await process.waitForOutput(timeout: .seconds(20)) { Self.count("</trkpt>", in: $0) >= 2 }
                #expect(process.isRunning)
                guard await requireLive(two, "two trkpts", fake: fake, process: process) else { return }
                #expect(!process.stdoutSoFar.contains("</gpx>"), "the document is still open while streaming")

                let result = await Self.end(process, by: .SIGTERM)
                #expect(result.stdout.hasSuffix("</gpx>\n"), "closed: \(result.stdout.suffix(100))")
                let records = try Formats.gpxRecords(result.stdout)
                #expect(records.count >= 2)
                for record in records {
                    expectRecord(record, isAnEpochOf: track, carries: [.altitude, .fix])
                }
            }
        }

        @Test("--follow --format geojson, SIGINT after the 2nd feature: exit 0 and valid GeoJSON")
        func geoJSONEndsOnSIGINT() async throws {
            let track = try ExpectedTrack("moving")
            try await withGPSFake("moving.nmea", cycle: 0.1, once: false) { fake in
                let process = try await startWhereAmI(["--follow", "--format", "geojson", "-q", fake.server])

                let two = await process.waitForOutput(timeout: .seconds(20)) { Self.count(#""type":"Feature""#, in: $0) >= 2 }
                #expect(process.isRunning)
                guard await requireLive(two, "two features", fake: fake, process: process) else { return }

                let result = await Self.end(process, by: .SIGINT)
                let records = try Formats.geoJSONRecords(result.stdout)
                #expect(records.count >= 2)
                for record in records {
                    expectRecord(record, isAnEpochOf: track)
                }
            }
        }

        @Test("SIGTERM while still waiting for the first fix: exit 0 and an empty but complete GPX document")
        func gpxEndsOnSIGTERMBeforeAnyFix() async throws {
            try await withGPSFake("nofix.nmea", once: false) { fake in
                let process = try await startWhereAmI(["--follow", "--format", "gpx", fake.server])
                // The header is written once the stream (and its signal handling) is set up.
                let header = await process.waitForOutput(timeout: .seconds(30)) { $0.contains("<trkseg>") }
                guard await requireLive(header, "the GPX header", fake: fake, process: process) else { return }
                let result = await Self.end(process, by: .SIGTERM)
                #expect(try Formats.gpxRecords(result.stdout).isEmpty)
            }
        }

        @Test("--follow of a live gpsd into a reader that pauses for a second: whereami reads on, the newest fixes follow in order")
        func liveStreamIntoABusyReader() async throws {
            // 60 epochs at 0.03 s each, into a pipe of one page that is not read for a second after the first line:
            // whereami's lines fill it after some 11 epochs, while gpsd goes on sending. The thread reading gpsd must not block on
            // the pipe: a debug build stops a real-time handler that blocks (the process would end by a signal).
            // The epochs that came meanwhile wait, the newest 16 kept, and are written once the reader reads.
            let times = (0..<60).map(RestartTests.time)
            try await withScratchDirectory("busy-reader") { directory in
                let log = try RestartTests.log(0..<60, in: directory)
                try await GPSFake.run(logs: [log], cycle: 0.01, once: true, lingerAfterEnd: 60, waitForClient: true) { fake in
                    let process = try await CLIProcess.start(
                        ["--follow", "--format", "json", "-q", fake.server], slowReader: .seconds(1), pausingAfterFirstOutput: true)
                    // whereami writes an epoch once it is whole: as its last report arrives once the receiver's epochs
                    // have shown how many make one, else when the next begins (the last at the signal). The 59th is
                    // awaited, and the 60th waited for before the signal, so that gpsd has sent it.
                    let written = await process.waitForOutput(timeout: .seconds(30)) { $0.contains(times[58]) }
                    guard await requireLive(written, "the log's epochs up to the 59th", fake: fake, process: process)
                    else { return }
                    _ = await process.waitForOutput(timeout: .seconds(30)) { $0.contains(times[59]) }
                    let result = await Self.end(process, by: .SIGINT)
                    #expect(result.stdout.hasSuffix("\n"), "no half-written line")
                    let printed = try result.stdoutLines.compactMap { try Formats.jsonRecord($0).timestamp }
                    #expect(printed.count == result.stdoutLines.count, "each record has its time")
                    #expect(printed == printed.sorted() && Set(printed).count == printed.count, "in order, each once: \(printed)")
                    #expect(printed.suffix(16) == times.suffix(16), "the newest epochs, none lost at the end: \(printed)")
                }
            }
        }

        @Test("a reader that goes away (| head -n 1) ends a live stream quietly with status 0")
        func readerGoesAway() async throws {
            try await withGPSFake("moving.nmea", cycle: 0.02, once: false) { fake in
                let script = #"set -o pipefail; "$0" --follow --format json -q "$1" | head -n 1"#
                let result = try await CLIProcess.start(["-c", script, BuiltProduct.url("whereami").path, fake.server],
                                   executable: URL(fileURLWithPath: "/bin/bash")).finish(deadline: .seconds(20))
                #expect(result.status == 0 && !result.endedBySignal, "whereami's status (141 = killed by SIGPIPE): \(result)")
                #expect(result.stdoutLines.count == 1)
            }
        }
    }
}

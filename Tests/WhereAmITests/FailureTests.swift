import Foundation
import GPSDTestSupport
import Testing

extension WhereAmIProcessTests {
    /// How `whereami` fails: no gpsd for one fix (69), no fix before the timeout (75), gpsd refusing the request
    /// (76); and how a stream goes on while gpsd is away.
    @Suite("whereami when gpsd is absent or has no fix", .timeLimit(.minutes(1)))
    struct FailureTests {
        /// A run of whereami and what merely launching it cost at the time.
        struct TimedRun {
            var result: CLIResult
            /// How long a whereami that exits at once (a usage error) took just before.
            var launch: Duration
            /// `result.elapsed` less `launch`: what the run itself took.
            var net: Duration { result.elapsed - launch }
        }

        /// Runs whereami until its own time (net of the launch) is under `limit`, at most five times, pausing between
        /// runs. On a quiet machine a launch costs some 30 ms, but when every suite (or another project's build)
        /// keeps both cores busy, a debug binary linking Foundation can take a second or two just to start and exit;
        /// that says nothing about whereami. Returns every run.
        private func runUntilFaster(than limit: Duration, _ arguments: [String]) async throws -> [TimedRun] {
            var runs: [TimedRun] = []
            while true {
                let launch = try await whereami("--no-such-option").elapsed
                runs.append(TimedRun(result: try await whereami(arguments), launch: launch))
                if runs.last!.net < limit || runs.count == 5 { return runs }
                try await Task.sleep(for: .seconds(1))
            }
        }

        @Test("no gpsd listening, one fix: exit 69 within 1 s, stderr names the address and the reason",
              arguments: [[], ["-q"]])
        func gpsdAbsent(options: [String]) async throws {
            let port = freeLoopbackPort()
            try #require(port != 0)
            let server = "127.0.0.1:\(port)"
            let runs = try await runUntilFaster(than: .seconds(1), options + [server])
            #expect(runs.map(\.net).min()! < .seconds(1),
                    "gives up at once, not after a timeout: \(runs.map { "\($0.result.elapsed) (launch \($0.launch))" })")
            let result = runs.last!.result
            #expect(runs.allSatisfy { $0.result.status == 69 && !$0.result.endedBySignal }, "\(result)")
            let errorLines = result.stderr.split(separator: "\n").filter { $0.contains(server) && $0.contains("connect") }
            #expect(!errorLines.isEmpty, "an error naming \(server) and why: \(result.stderr)")
            #expect(result.stderr.contains("refused"), "the reason: \(result.stderr)")
            #expect(result.stdout.isEmpty, "no fix on stdout: \(result.stdout)")
            if options.contains("-q") {
                #expect(!result.stderr.contains("asking gpsd") && !result.stderr.contains("connecting"),
                        "--quiet leaves only the error: \(result.stderr)")
            }
        }

        @Test("no gpsd listening, --follow: keeps trying and says so, until --timeout: exit 75, a complete document",
              arguments: [["--format", "gpx"], ["--format", "json", "-q"]])
        func gpsdAbsentFollow(options: [String]) async throws {
            let port = freeLoopbackPort()
            try #require(port != 0)
            let result = try await whereami(["--follow", "--timeout", "2"] + options + ["127.0.0.1:\(port)"])
            #expect(result.status == 75 && !result.endedBySignal, "\(result)")
            #expect(result.elapsed >= .seconds(2), "it kept trying for the whole --timeout: \(result.elapsed)")
            if options.contains("-q") {
                // No status lines: only the error, saying what stood in the way.
                let lines = result.stderr.split(separator: "\n")
                #expect(lines.count == 1 && lines[0].hasPrefix("whereami: no fix within 2.0 s (reconnecting in ")
                        && lines[0].lowercased().contains("connection refused"), "\(result.stderr)")
                #expect(result.stdout.isEmpty)
            } else {
                let reconnecting = result.stderr.split(separator: "\n").filter { $0.contains("reconnecting in") }
                #expect(reconnecting.count >= 2, "a line for each retry: \(result.stderr)")
                #expect(try Formats.gpxRecords(result.stdout).isEmpty, "an empty but complete GPX document")
            }
        }

        @Test("no fix (nofix.nmea): --timeout 1 exits 75 after about 1 s and says so",
              .enabled(if: GPSFake.isAvailable),
              arguments: [["-q"], ["--follow", "--format", "json"], ["--follow", "--format", "gpx"]])
        func noFix(options: [String]) async throws {
            try await withGPSFake("nofix.nmea", once: false) { fake in
                let runs = try await runUntilFaster(than: .milliseconds(2500), options + ["--timeout", "1", fake.server])
                let result = runs.last!.result
                #expect(runs.allSatisfy { $0.result.status == 75 && !$0.result.endedBySignal }, "\(result)")
                #expect(runs.allSatisfy { $0.result.elapsed >= .seconds(1) }, "waits the whole second: \(runs.map(\.result.elapsed))")
                #expect(runs.map(\.net).min()! < .seconds(20),
                        "and then ends (a bound only a hang breaks): \(runs.map { "\($0.result.elapsed) (launch \($0.launch))" })")
                #expect(result.stderr.contains("no fix"), "says why: \(result.stderr)")
                #expect(result.stderr.contains("1.0 s"), "and how long it waited: \(result.stderr)")
                // gpsfake adds its receiver once whereami watches (the gate): gpsd may not have it yet after 1 s.
                #expect(result.stderr.contains("(waiting for a fix") || result.stderr.contains("(gpsd has no receiver)"),
                        "and what stood in the way: \(result.stderr)")
                switch options.last {
                case "gpx":
                    #expect(try Formats.gpxRecords(result.stdout).isEmpty, "an empty but complete GPX document")
                default:
                    #expect(result.stdout.isEmpty, "nothing on stdout: \(result.stdout)")
                }
            }
        }

        @Test("a device gpsd does not have: gpsd's ERROR, exit 76", .enabled(if: GPSFake.isAvailable))
        func unknownDevice() async throws {
            try await withGPSFake("moving.nmea", once: false) { fake in
                let result = try await whereami("--timeout", "10", "\(fake.server):/dev/nonexistent")
                #expect(result.status == 76 && !result.endedBySignal, "\(result)")
                #expect(result.stderr.contains("/dev/nonexistent"), "names the device: \(result.stderr)")
                #expect(result.elapsed < .seconds(10), "fails at gpsd's answer, not at the timeout")
                #expect(result.stdout.isEmpty)
            }
        }

        @Test("gpsd going away mid-stream: every fix printed, then \"reconnecting\" on stderr; SIGTERM: a complete GPX document, exit 0",
              .enabled(if: GPSFake.isAvailable))
        func connectionLost() async throws {
            let track = try ExpectedTrack("twod")
            // Played once; gpsfake stops gpsd a second after the last sentence.
            try await withGPSFake("twod.nmea", cycle: 0.02, once: true) { fake in
                let process = try await startWhereAmI(["--follow", "--format", "gpx", fake.server])
                let reconnecting = await process.waitForOutput(onStandardError: true, timeout: .seconds(30)) {
                    $0.contains("reconnecting in")
                }
                guard await requireLive(reconnecting, "a reconnecting status line", fake: fake, process: process) else {
                    return
                }
                #expect(process.isRunning, "it keeps going while gpsd is away")
                process.terminate()
                let result = await process.finish(deadline: .seconds(10))
                #expect(result.status == 0 && !result.endedBySignal, "\(result)")
                let records = try Formats.gpxRecords(result.stdout)
                expectWholeTrack(records, equals: track, carries: [.altitude, .fix])
            }
        }
    }
}

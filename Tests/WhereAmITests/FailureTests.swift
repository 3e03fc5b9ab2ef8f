import Foundation
import GPSDTestSupport
import Testing

extension WhereAmIProcessTests {
    /// How `whereami` fails: no gpsd for one fix (69), no fix before the timeout (75), gpsd refusing the request
    /// (76); and how a stream goes on while gpsd is away.
    @Suite("whereami when gpsd is absent or has no fix", .timeLimit(.minutes(1)))
    struct FailureTests {
        @Test("no gpsd listening, one fix: exit 69 after one attempt, stderr names the address and the reason",
              arguments: [[], ["-q"]])
        func gpsdAbsent(options: [String]) async throws {
            let port = freeLoopbackPort()
            try #require(port != 0)
            let server = "127.0.0.1:\(port)"
            let result = try await whereami(options + [server])
            #expect(result.status == 69 && !result.endedBySignal, "\(result)")
            // Gives up at once: well before the default 30-s timeout, and without retrying.
            #expect(result.elapsed < .seconds(20), "not after a timeout: \(result.elapsed)")
            #expect(!result.stderr.contains("reconnecting") && !result.stderr.contains("attempt 2"),
                    "one attempt: \(result.stderr)")
            if !options.contains("-q") {
                #expect(result.stderr.split(separator: "\n").filter { $0.hasSuffix("connecting") }.count == 1,
                        "one attempt: \(result.stderr)")
            }
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
                // The timeout usually finds whereami waiting out a retry; a late one can find it mid-connect.
                let lines = result.stderr.split(separator: "\n")
                #expect(lines.count == 1, "\(result.stderr)")
                #expect(lines.first.map {
                    $0.hasPrefix("whereami: no fix within 2.0 s (reconnecting in ") && $0.lowercased().contains("connection refused")
                        || $0.hasPrefix("whereami: no fix within 2.0 s (connecting (attempt ")
                } == true, "\(result.stderr)")
                #expect(result.stdout.isEmpty)
            } else {
                // Every attempt after the first follows a line that announced it and said why the last one failed.
                let lines = result.stderr.split(separator: "\n").map(String.init)
                let reconnecting = lines.filter { $0.contains("reconnecting in") }
                #expect(!reconnecting.isEmpty && reconnecting.allSatisfy { $0.lowercased().contains("connection refused") },
                        "a line for each retry, with its reason: \(result.stderr)")
                // Status lines and the last one, which a late timeout may end mid-connect: "(connecting (attempt 3))".
                var attempts = 0
                for (index, line) in lines.enumerated() where !line.contains("reconnecting") {
                    guard let attempt = line.firstMatch(of: /connecting \(attempt (\d+)\)/)?.1 else { continue }
                    attempts += 1
                    #expect(lines[..<index].contains { $0.contains("reconnecting in") && $0.contains("(attempt \(attempt)):") },
                            "\(line) was announced: \(result.stderr)")
                }
                #expect(attempts >= 1, "2 s of 0.25-s backoffs hold a second attempt: \(result.stderr)")
                #expect(try Formats.gpxRecords(result.stdout).isEmpty, "an empty but complete GPX document")
            }
        }

        @Test("gpsd not running yet, --follow without --timeout: no limit on the wait; it keeps trying and prints the fixes of the gpsd that comes",
              .enabled(if: GPSFake.isAvailable))
        func gpsdLateFollow() async throws {
            let port = freeLoopbackPort()
            try #require(port != 0)
            let process = try await startWhereAmI(["--follow", "--format", "json", "127.0.0.1:\(port)"])
            let retrying = await process.waitForOutput(onStandardError: true, timeout: .seconds(30)) {
                $0.contains("reconnecting in")
            }
            #expect(retrying, "it keeps trying: \(process.stderrSoFar)")
            // With a limit it would say "waiting for fixes (first within N s)", and end with 75 when it passed.
            let lines = process.stderrSoFar.split(separator: "\n")
            #expect(lines.contains("whereami: waiting for fixes"), "no limit on the wait: \(process.stderrSoFar)")

            try await withScratchDirectory("late") { directory in
                let log = try RestartTests.log(0..<10, in: directory)
                try await GPSFake.run(logs: [log], cycle: 0.05, once: true, lingerAfterEnd: 60, waitForClient: true,
                                      port: port) { fake in
                    let printed = await process.waitForOutput(timeout: .seconds(30)) { $0.contains(RestartTests.time(3)) }
                    _ = await requireLive(printed, "the fix of \(RestartTests.time(3))", fake: fake, process: process)
                }
            }
            process.terminate()
            let result = await process.finish(deadline: .seconds(30))
            #expect(result.status == 0 && !result.endedBySignal, "\(result)")
            let times = try result.stdoutLines.map { try Formats.jsonRecord($0).timestamp ?? "" }
            #expect(times.contains(RestartTests.time(3)) && times == times.sorted(), "\(times)")
        }

        @Test("no fix (nofix.nmea): --timeout 1 exits 75 after about 1 s and says so",
              .enabled(if: GPSFake.isAvailable),
              arguments: [["-q"], ["--follow", "--format", "json"], ["--follow", "--format", "gpx"]])
        func noFix(options: [String]) async throws {
            try await withGPSFake("nofix.nmea", once: false) { fake in
                let result = try await whereami(options + ["--timeout", "1", fake.server])
                #expect(result.status == 75 && !result.endedBySignal, "\(result)")
                #expect(result.elapsed >= .seconds(1), "waits the whole second: \(result.elapsed)")
                #expect(result.elapsed < .seconds(20), "and then ends (a bound only a hang breaks): \(result.elapsed)")
                #expect(result.stderr.contains("no fix"), "says why: \(result.stderr)")
                #expect(result.stderr.contains("1.0 s"), "and how long it waited: \(result.stderr)")
                // gpsfake adds its receiver once whereami watches (the gate): gpsd may not have it yet after 1 s, and
                // a whereami slow to start may not even have heard from gpsd; whichever, the status before a fix.
                // A request's timeout names it itself (`: waiting for a fix`), a stream's whereami adds (`(waiting …`).
                let reasons = ["waiting for a fix", "gpsd has no receiver", "connected", "connecting"]
                let last = result.stderr.split(separator: "\n").last ?? ""
                #expect(last.hasPrefix("whereami: no fix")
                            && reasons.contains { last.contains(" (\($0)") || last.contains(": \($0)") },
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
                // 76, not the timeout's 75: it fails at gpsd's answer, however slow the machine.
                let result = try await whereami("--timeout", "60", "\(fake.server):/dev/nonexistent")
                #expect(result.status == 76 && !result.endedBySignal, "\(result)")
                #expect(result.stderr.contains("/dev/nonexistent"), "names the device: \(result.stderr)")
                #expect(result.stdout.isEmpty)
            }
        }

        @Test("gpsd going away mid-stream: every fix printed, then \"reconnecting\" on stderr; SIGTERM: a complete GPX document, exit 0",
              .enabled(if: GPSFake.isAvailable))
        func connectionLost() async throws {
            let track = try ExpectedTrack("twod")
            // Played once; gpsd stays up until every epoch is printed, then goes away. whereami writes an epoch once
            // it is whole: as its last report arrives once the receiver's epochs have shown how many make one, else
            // when the next begins, or the connection's end says so. So all but the last are awaited, and the last
            // waited for (it may come only with the connection's end).
            try await withGPSFake("twod.nmea", cycle: 0.02, once: true, lingerAfterEnd: 60) { fake in
                let process = try await startWhereAmI(["--follow", "--format", "gpx", fake.server])
                let printed = await process.waitForOutput(timeout: .seconds(30)) {
                    $0.components(separatedBy: "<trkpt").count - 1 >= track.fixes.count - 1
                }
                guard await requireLive(printed, "the track's fixes but the last", fake: fake, process: process) else {
                    return
                }
                _ = await process.waitForOutput(timeout: .seconds(30)) {
                    $0.components(separatedBy: "<trkpt").count - 1 >= track.fixes.count
                }
                await fake.stop()
                let reconnecting = await process.waitForOutput(onStandardError: true, timeout: .seconds(30)) {
                    $0.contains("reconnecting in")
                }
                guard await requireLive(reconnecting, "a reconnecting status line", fake: fake, process: process) else {
                    return
                }
                #expect(process.isRunning, "it keeps going while gpsd is away")
                process.terminate()
                let result = await process.finish(deadline: .seconds(30))
                #expect(result.status == 0 && !result.endedBySignal, "\(result)")
                let records = try Formats.gpxRecords(result.stdout)
                expectWholeTrack(records, equals: track, carries: [.altitude, .fix])
            }
        }
    }
}

import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

extension WhereAmIProcessTests {
    /// `--max-age` and the fix gpsd holds: taken when gpsd's clock vouches for its age, and not when it cannot, as
    /// with a receiver's time a year from the system's (a computer without a real-time clock, before NTP, sees the
    /// same).
    @Suite("whereami --max-age and the fix gpsd holds", .enabled(if: GPSFake.isAvailable), .timeLimit(.minutes(2)))
    struct MaxAgeTests {
        /// A log of 3D epochs a second apart, starting a year after now by the system clock.
        static func yearAheadLog(in directory: URL) throws -> (log: URL, start: Date) {
            let start = NMEA.Track.aYear(after: Date())
            return (try writeLog(NMEA.Track.epochs(1200, from: start), named: "year-ahead.nmea", in: directory), start)
        }

        @Test("a log dated just before now, then silent: --max-age 60 takes the fix gpsd holds, aged by gpsd's clock")
        func heldFixOfKnownAge() async throws {
            // Five epochs dated 10 to 6 s before now, then a minute of text sentences that report nothing.
            let start = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 10).rounded(.down))
            let cycles = NMEA.Track.epochs(5, from: start) + Array(repeating: NMEA.sentence("GPTXT,01,01,02,hold"), count: 1200)
            try await withScratchDirectory { directory in
                let log = try writeLog(cycles, named: "just-before-now.nmea", in: directory)
                try await GPSFake.run(logs: [log], cycle: 0.05, once: true, lingerAfterEnd: 1, waitForClient: true) { fake in
                    // A first client starts the log and follows it to its last epoch: whereami writes an epoch once it
                    // is whole, here as its last report arrives (the receiver's epochs have shown how many make one);
                    // gpsd then holds the last.
                    let first = try await whereami("--follow", "--count", "5", "--format", "json", "-q", fake.server)
                    guard await requireLive(first.status == 0 && first.stdoutLines.count == 5, "five epochs: \(first)",
                                            fake: fake) else { return }
                    let polls = fake.pollRepliesWithFix

                    let result = try await whereami("--max-age", "60", "--timeout", "4", "--format", "json", "-q", fake.server)
                    guard await requireLive(result.status == 0 && !result.endedBySignal && result.stdoutLines.count == 1,
                                            "exit 0 after one line: \(result)", fake: fake) else { return }
                    let record = try Formats.jsonRecord(result.stdoutLines[0])
                    #expect(record.timestamp == GPSDTime.string(from: start.addingTimeInterval(4)), "the last epoch: \(result.stdout)")
                    #expect(fake.pollRepliesWithFix > polls, "from gpsd's answer to a poll:\n\(fake.standardError.suffix(3000))")
                }
            }
        }

        @Test("a log dated a year ahead, its feeder stopped: --max-age 5 exits 75; with the feeder running, a live fix")
        func yearAheadFeederStopped() async throws {
            try await withScratchDirectory { directory in
                let (log, start) = try Self.yearAheadLog(in: directory)
                try await GPSFake.run(logs: [log], cycle: 0.05, once: true, lingerAfterEnd: 1, waitForClient: true) { fake in
                    defer { try? fake.resume(.feeder) }
                    // A first client starts the log; once it has a fix, gpsd holds one. Then the receiver falls silent.
                    let first = try await whereami("--format", "json", "-q", fake.server)
                    guard await requireLive(first.status == 0 && first.stdoutLines.count == 1, "a first fix: \(first)",
                                            fake: fake) else { return }
                    try fake.suspend(.feeder)
                    let polls = fake.pollRepliesWithFix

                    let silent = try await whereami("--max-age", "5", "--timeout", "4", fake.server)
                    #expect(silent.status == 75 && !silent.endedBySignal, "no fix in time: \(silent)")
                    #expect(silent.stdout.isEmpty, "\(silent)")
                    let last = silent.stderr.split(separator: "\n").last ?? ""
                    #expect(last.hasPrefix("whereami: no fix"), "says so: \(silent.stderr)")
                    // gpsd offered the fix it held, a year ahead of its own clock: refused, not missing.
                    #expect(fake.pollRepliesWithFix > polls, "gpsd answered the poll with its fix:\n\(fake.standardError.suffix(3000))")

                    try fake.resume(.feeder)
                    let live = try await whereami("--max-age", "5", "--timeout", "20", "--format", "json", "-q", fake.server)
                    guard await requireLive(live.status == 0 && !live.endedBySignal && live.stdoutLines.count == 1,
                                            "a live fix: \(live)", fake: fake) else { return }
                    let record = try Formats.jsonRecord(live.stdoutLines[0])
                    let time = try #require(record.timestamp.flatMap(GPSDTime.date(from:)), "\(live.stdout)")
                    let firstTime = try #require(try Formats.jsonRecord(first.stdoutLines[0]).timestamp.flatMap(GPSDTime.date(from:)))
                    // An epoch of the log from the feeder's stop on (the rest of the epoch it stopped in may come first).
                    let second = time.timeIntervalSince(start)
                    #expect(second == second.rounded() && (0..<1200).contains(second), "an epoch of the log: \(live.stdout)")
                    #expect(time >= firstTime, "not before the first client's fix: \(live.stdout)")
                    #expect(abs(record.longitude - NMEA.Track.longitude(Int(second))) < 1e-6, "\(live.stdout)")
                }
            }
        }
    }
}

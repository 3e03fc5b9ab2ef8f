import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

extension SampleTests {
    /// FleetHealth's `fix_age_seconds` through a gpsd that stalls, read from the file it writes (no node_exporter).
    @Suite("FleetHealth's fix age through a stall")
    struct FleetHealthStallTests {
        /// A receiver that sends one RMC a second, fed in real time, with no fix from its 10th to its 16th second
        /// (a text sentence each second instead): gpsd reports each fix as soon as the feeder wrote it.
        static func log(in directory: URL) throws -> URL {
            let cycles = (0..<180).map { second in
                (10..<16).contains(second) ? NMEA.sentence("GPTXT,01,01,02,no fix")
                    : NMEA.rmc(time: NMEA.Track.time(second), latitude: 52.5, longitude: NMEA.Track.longitude(second))
            }
            return try writeLog(cycles, named: "rmc-1hz-gap.nmea", in: directory)
        }

        @Test("gpsd stopped 6 s: the fix age grows past 5 s, then is the age of the backlog's newest fix, not the time since it came")
        func fixAgeThroughAStall() async throws {
            try await withScratchDirectory("fleet-stall") { scratch in
                let output = scratch.appendingPathComponent("gpsd.prom")
                try await GPSFake.run(logs: [try Self.log(in: scratch)], cycle: 1, once: true, lingerAfterEnd: 1,
                                      waitForClient: true) { fake in
                    defer { try? fake.resume(.gpsd) }
                    let health = try await Sample.start("FleetHealth", ["--interval", "0.1", "-o", output.path, fake.server])
                    let label = #"{server="\#(fake.server)"}"#
                    /// The fix age FleetHealth last wrote, and the moment after it was read.
                    func fixAge() -> (age: Double?, read: ContinuousClock.Instant) {
                        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
                        return (FleetHealthTests.samples(text)["gpsd_fix_age_seconds\(label)"], ContinuousClock.now)
                    }
                    // The test's own stream sees the fixes FleetHealth sees, and what the library makes of their age.
                    let gps = AsyncLocationManager(server: try GPSDServer(parsing: fake.server))
                    var fixes = gps.updates(bufferingPolicy: .unbounded).makeAsyncIterator()
                    func next(reaching second: Double) async throws -> Location {
                        while true {
                            let fix = try #require(try await fixes.next(), "the stream goes on to the receiver's second \(second)")
                            if fix.timestamp.timeIntervalSince(NMEA.Track.start) >= second { return fix }
                        }
                    }

                    // Fixes 0 to 7 before the stall: the receiver's time and the monotonic clock are related by them.
                    _ = try await next(reaching: 7)
                    try fake.suspend(.gpsd)
                    let stopped = ContinuousClock.now
                    var longest = 0.0
                    while ContinuousClock.now < stopped + .seconds(6) {
                        longest = max(longest, fixAge().age ?? 0)
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    try fake.resume(.gpsd)
                    #expect(longest > 5, "the age grew through the stall: at most \(longest) s")

                    // The backlog, fixes 8 and 9, comes in a burst; then the receiver has no fix until its 16th second.
                    let newest = try await next(reaching: 9)
                    let measured = try #require(newest.arrival?.measured, "a live fix's age is known")
                    #expect(newest.timestamp.timeIntervalSince(NMEA.Track.start) == 9, "\(newest)")
                    // FleetHealth had the burst once its age falls below the time since the fix before it (7, a second or
                    // more earlier than 9) was measured.
                    var (age, read) = fixAge()
                    while (age ?? .infinity) > measured.duration(to: read).timeInterval + 1,
                          read < measured + .seconds(7) {
                        try await Task.sleep(for: .milliseconds(20))
                        (age, read) = fixAge()
                    }
                    // Written at most a write interval (and a late wake) before it was read. Counted from the burst's
                    // arrival instead, it would be the 4 s the fix waited in gpsd less.
                    let truth = measured.duration(to: read).timeInterval
                    #expect(age.map { $0 > truth - 0.6 && $0 < truth + 0.2 } == true,
                            "the backlog's newest fix's age: \(age as Any) s read \(truth) s after it was measured")

                    // The receiver reports again: a fresh fix.
                    while (fixAge().age ?? .infinity) >= 1.5, ContinuousClock.now < measured + .seconds(20) {
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    #expect((fixAge().age ?? .infinity) < 1.5, "a fresh fix after the gap: \(fixAge().age as Any)")

                    await gps.stop()
                    health.terminate()
                    let result = await health.finish(deadline: .seconds(30))
                    #expect(!result.killedAfterDeadline, "\(result)")
                }
            }
        }
    }
}

import Foundation
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// A real gpsd that reports each epoch in two TPVs: a control loop polling the snapshot sees one age an epoch.
@Suite("Two TPVs an epoch from a real gpsd", .enabled(if: GPSFake.isAvailable), .serialized, .liveSuite, .timeLimit(.minutes(2)))
struct LiveEpochInstantTests {
    /// The log's first epoch.
    static let start = NMEA.Track.start
    /// Epochs in the log: 6 s at 10 Hz, then gpsfake starts it over, and the receiver's time steps back.
    static let epochs = 60

    /// A receiver at 10 Hz moving east at 5.8 kn, each epoch an RMC, a GGA and a GSA, but the third an RMC alone.
    /// gpsd 3.22 marks the sentence with a time last read before a new epoch as ending a cycle, and never unmarks
    /// one: after the GGA of the first epochs, the lone RMC. From then on it sends two TPVs an epoch, the RMC's (a
    /// 2D fix, without altitude, though it says 3D) and the GGA's one sentence later, adding the altitude, as a
    /// receiver that sometimes skips a GGA leaves gpsd doing for good.
    static func log(in directory: URL) throws -> URL {
        let metresPerEpoch = 5.8 * 1852 / 3600 / 10
        let cycles = (0..<epochs).map { epoch -> String in
            let time = start.addingTimeInterval(Double(epoch) / 10)
            let longitude = 13.4 + Double(epoch) * metresPerEpoch / (111_319.49 * cos(52.5 * .pi / 180))
            return epoch == 2 ? NMEA.rmc(time: time, latitude: 52.5, longitude: longitude)
                : NMEA.epoch(time: time, latitude: 52.5, longitude: longitude)
        }
        return try writeLog(cycles, named: "two-tpvs.nmea", in: directory)
    }

    /// An epoch of one play of the log.
    struct Epoch: Hashable {
        var play: Int
        var time: Date
    }

    /// What the poller saw.
    struct Seen {
        var reads = 0
        var last: LocationSnapshot?
        /// An unchanged fix whose instant of measurement moved, whose age went down, or whose prediction stepped
        /// back.
        var moved: [String] = []
        var younger: [String] = []
        var steppedBack: [String] = []
    }

    @Test("gpsd sends an RMC's TPV, then a GGA's: no snapshot age of an unchanged fix goes down, no prediction steps back")
    func oneAgeAnEpoch() async throws {
        try await withScratchDirectory("two-tpvs") { directory in
            let log = try Self.log(in: directory)
            // Three sentences an epoch, 10 epochs a second; the log plays again and again.
            try await GPSFake.run(logs: [log], cycle: 1.0 / 30, once: false, waitForClient: true) { fake in
                let manager = LocationManager(server: try GPSDServer(parsing: fake.server))
                let gps = AsyncLocationManager(manager: manager)
                let seen = Locked(Seen())
                let polling = Task {
                    while !Task.isCancelled {
                        let snapshot = manager.snapshot
                        seen.withLock { Self.check(snapshot, into: &$0) }
                        try? await Task.sleep(for: .milliseconds(5))
                    }
                }
                defer { polling.cancel() }
                // Every report the stream passes on (the GGA's, adding the altitude, as well as the RMC's), until
                // the receiver's time has stepped back twice and 3 s more have come.
                var reports: [Epoch: [Location]] = [:]
                var stepsBack = 0
                var newest: Date?
                var after = 0
                for try await fix in gps.updates(bufferingPolicy: .unbounded) {
                    if let newest, fix.timestamp < newest { stepsBack += 1 }
                    newest = fix.timestamp
                    reports[Epoch(play: stepsBack, time: fix.timestamp), default: []].append(fix)
                    if stepsBack >= 2 {
                        after += 1
                        if after >= 60 { break }
                    }
                }
                polling.cancel()
                _ = await polling.value
                await gps.stop()

                // gpsd did send two TPVs an epoch (3.22: the RMC's and the GGA's; 3.25 and later one a sentence, a
                // third where the GSA adds a value), all passed on.
                let twice = reports.values.filter { $0.count >= 2 }
                try #require(twice.count >= 50, "epochs reported twice: \(twice.count) of \(reports.count)\n\(fake.standardError.suffix(2000))")
                // Each epoch was measured once: all its reports at the same instant.
                let split = twice.filter { epoch in epoch.contains { $0.arrival?.measured != epoch[0].arrival?.measured } }
                #expect(split.isEmpty, "\(split.count) epochs with two instants: \(split.prefix(3).map { $0.map(\.arrival) })")
                let result = seen.withLock { $0 }
                #expect(result.reads > 500, "polled: \(result.reads)")
                #expect(result.moved.isEmpty, "\(result.moved.count): \(result.moved.prefix(6))")
                #expect(result.younger.isEmpty, "\(result.younger.count): \(result.younger.prefix(6))")
                #expect(result.steppedBack.isEmpty, "\(result.steppedBack.count): \(result.steppedBack.prefix(6))")
            }
        }
    }

    /// Checks `snapshot` against the one before: while its fix is the same epoch's, the instant the fix was
    /// measured stays, its age grows, and the position predicted for the read goes on east.
    static func check(_ snapshot: LocationSnapshot, into seen: inout Seen) {
        seen.reads += 1
        defer { seen.last = snapshot }
        guard let previous = seen.last, let fix = snapshot.location, let before = previous.location,
              fix.timestamp == before.timestamp, snapshot.connections == previous.connections else { return }
        let second = String(format: "%.1f", fix.timestamp.timeIntervalSince(start))
        if fix.arrival?.measured != before.arrival?.measured {
            seen.moved.append("\(second): measured \(String(describing: before.arrival)) then \(String(describing: fix.arrival))")
        }
        if let age = snapshot.locationAge, let earlier = previous.locationAge, age < earlier {
            seen.younger.append("\(second): age \(earlier) then \(age)")
        }
        if let pose = try? snapshot.predictedLocation(at: snapshot.instant),
           let earlier = try? previous.predictedLocation(at: previous.instant),
           pose.coordinate.longitude < earlier.coordinate.longitude {
            seen.steppedBack.append("\(second): \(earlier.coordinate.distance(from: pose.coordinate)) m back")
        }
    }
}

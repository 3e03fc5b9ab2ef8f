import Foundation
@testable import GPSDLocation
import GPSDTestSupport
import Testing

/// One instant of measurement per epoch where gpsd reports an epoch in two TPVs (an RMC's, then a GGA's that adds
/// the altitude): the second report's age goes on from the first's, and a prediction from it does not step back,
/// whatever the clock filter learnt between the two, and after the receiver's time steps back.
@Suite("One instant of measurement per epoch")
struct EpochInstantTests {
    /// How long after the RMC's report the GGA's arrives.
    static let secondReport = 0.034

    /// A 10 Hz receiver's epochs, each reported twice: the RMC's report `transit` after the epoch (20 to 60 ms, a
    /// fixed pseudo-random sequence), the GGA's 34 ms later. The receiver's time runs `seconds` on, then steps back
    /// to the start `loops` times (a replay starting over), 0.5 s after its last epoch; after each step back the
    /// first reports come late, `late` seconds at first and less each epoch, until 1.2 s in (gpsd finding the
    /// cycle's end again, a feeder catching up).
    struct Epoch {
        var second: Double
        var arrival: Double
        /// How late the RMC's report is beyond the fastest transit.
        var trueDelay: Double
        /// Whether it falls in the late stretch after a step back.
        var isLate: Bool
    }

    static func epochs(seconds: Int = 20, loops: Int = 3, late: Double = 0) -> [Epoch] {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        var start = 1000.0
        var epochs: [Epoch] = []
        for loop in 0..<loops {
            for epoch in 0..<(seconds * 10) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let second = Double(epoch) / 10
                let isLate = loop > 0 && epoch < 12
                let lateness = isLate ? late * Double(12 - epoch) / 12 : 0
                let transit = 0.02 + 0.04 * Double(state >> 11) / Double(1 << 53) + lateness
                epochs.append(Epoch(second: second, arrival: start + second + transit, trueDelay: transit - 0.02,
                                    isLate: isLate))
            }
            start += Double(seconds) + 0.5
        }
        return epochs
    }

    static func time(_ second: Double) -> Date { Date(timeIntervalSince1970: 1_748_779_200 + second) }

    /// Each epoch's two delays from the filter, in seconds, with the epoch.
    static func delays(_ epochs: [Epoch]) -> [(epoch: Epoch, first: Double, second: Double)] {
        var filter = ReceiverClockFilter()
        return epochs.map { epoch in
            let first = filter.delay(ofLiveFixAt: time(epoch.second), arrivedAt: .seconds(epoch.arrival))
            let second = filter.delay(ofLiveFixAt: time(epoch.second), arrivedAt: .seconds(epoch.arrival + secondReport))
            return (epoch, first.timeInterval, second.timeInterval)
        }
    }

    static func describe(_ delays: [(epoch: Epoch, first: Double, second: Double)]) -> String {
        delays.prefix(12).map {
            String(format: "%.1f: %.3f then %.3f (true %.3f)", $0.epoch.second, $0.first, $0.second, $0.epoch.trueDelay)
        }.joined(separator: "; ")
    }

    // MARK: The filter, as a value

    @Test("two reports an epoch at 10 Hz, jittered: the second's delay is the first's and the 34 ms between them")
    func bothReportsOfAnEpochHaveOneInstant() {
        let delays = Self.delays(Self.epochs())
        // The instant of measurement is the arrival less the delay: the same for both reports, to a microsecond
        // (the filter keeps seconds since 1970 as a Double).
        let split = delays.filter { abs(($0.second - $0.first) - Self.secondReport) > 1e-6 }
        #expect(split.isEmpty, "\(split.count) epochs with two instants: \(Self.describe(split))")
    }

    @Test("after the receiver's time steps back, with its first reports late: one instant an epoch, each age near its lag")
    func aTimeSteppingBackWithLateReportsKeepsOneInstantAnEpoch() {
        let delays = Self.delays(Self.epochs(late: 0.8))
        let split = delays.filter { abs(($0.second - $0.first) - Self.secondReport) > 1e-6 }
        #expect(split.isEmpty, "\(split.count) epochs with two instants: \(Self.describe(split))")
        // The late reports right after a step back count as barely delayed: nothing tells them from a clock
        // slower than before. Once reports come on time again, each age is within 0.35 s of its lag (the line
        // drawn through the late ones takes a second or so to straighten), not the 0.6 to 1.2 s of a line through
        // the late reports alone, carried forward.
        let onTime = delays.filter { !$0.epoch.isLate }
        let wrong = onTime.filter { abs($0.first - $0.epoch.trueDelay) > 0.35 }
        #expect(wrong.isEmpty, "\(wrong.count) ages off: \(Self.describe(wrong))")
        // In steady running, as close as the jitter of the transits allows.
        let steady = delays.filter { $0.epoch.second >= 5 }
        let jittered = steady.filter { abs($0.first - $0.epoch.trueDelay) > 0.045 }
        #expect(jittered.isEmpty, "\(Self.describe(jittered))")
    }

    // MARK: The manager

    /// A 10 Hz receiver moving east along the equator at 10 m/s, each epoch reported as an RMC's 2D fix, then 34 ms
    /// later as a GGA's 3D fix, with the receiver's time stepping back to the start after 10 s and its first
    /// reports late; a control loop reads the snapshot every 10 ms, on the manager's manual clock.
    @Test("a 100 Hz loop over two TPVs an epoch and a time stepping back: an unchanged fix's age never goes down, no prediction steps back")
    func aControlLoopSeesOneAgeAnEpoch() throws {
        let rig = ManagerRig()
        rig.manager.startUpdatingLocation()
        rig.source.send(.connected)
        var reports: [(at: Double, fix: Location)] = []
        for epoch in Self.epochs(seconds: 10, loops: 2, late: 0.8) {
            var rmc = Location.sample(second: 0, metresPerSecond: 10)
            rmc.coordinate.longitude = epoch.second * 10 / 111_319.49
            rmc.timestamp = Self.time(epoch.second)
            rmc.altitude = nil
            rmc.ellipsoidalAltitude = nil
            rmc.verticalAccuracy = nil
            rmc.fix = .twoDimensional
            var gga = rmc
            gga.altitude = 50
            gga.fix = .threeDimensional
            reports += [(epoch.arrival, rmc), (epoch.arrival + Self.secondReport, gga)]
        }
        var now = Duration.seconds(1000)
        var previous: LocationSnapshot?
        var (younger, twoInstants, steppedBack) = ([String](), [String](), [String]())
        var next = 0
        var ticks = 0
        while next < reports.count {
            // Every report due by this tick arrives, then the loop reads.
            while next < reports.count, Duration.seconds(reports[next].at) <= now {
                rig.clock.advance(by: .seconds(reports[next].at) - rig.clock.now)
                rig.source.send(reports[next].fix)
                next += 1
            }
            rig.clock.advance(by: now - rig.clock.now)
            let snapshot = rig.manager.snapshot
            ticks += 1
            if let previous, let location = snapshot.location, previous.location?.timestamp == location.timestamp,
               let age = snapshot.locationAge, let before = previous.locationAge {
                let elapsed = previous.instant.duration(to: snapshot.instant)
                let second = String(format: "%.1f", location.timestamp.timeIntervalSince(Self.time(0)))
                if age < before { younger.append("\(second): \(before) then \(age)") }
                if age - before != elapsed { twoInstants.append("\(second): \(before) then \(age) \(elapsed) later") }
                if let pose = try? snapshot.predictedLocation(at: snapshot.instant),
                   let earlier = try? previous.predictedLocation(at: previous.instant),
                   pose.coordinate.longitude < earlier.coordinate.longitude {
                    steppedBack.append("\(second): \(earlier.coordinate.distance(from: pose.coordinate)) m")
                }
            }
            previous = snapshot
            now += .milliseconds(10)
        }
        #expect(ticks > 2000)
        #expect(younger.isEmpty, "an unchanged fix grew younger: \(younger.count), \(younger.prefix(6))")
        #expect(steppedBack.isEmpty, "the prediction stepped back: \(steppedBack.count), \(steppedBack.prefix(6))")
        // One instant of measurement an epoch, to the attosecond: the age grows exactly as the clock.
        #expect(twoInstants.isEmpty, "\(twoInstants.count): \(twoInstants.prefix(6))")
        rig.manager.stopUpdatingLocation()
    }
}

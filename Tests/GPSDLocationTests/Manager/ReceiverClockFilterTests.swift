import Foundation
@testable import GPSDLocation
import GPSDTestSupport
import Testing

/// The estimate of how long before its arrival a receiver measured each fix, as a value: receiver times and
/// arrival times on an injected monotonic clock, as the manager hands them in.
@Suite("The receiver clock filter: a fix's delay")
struct ReceiverClockFilterTests {
    /// The receiver's time `seconds` after 2025-06-01T12:00:00Z.
    static func time(_ seconds: Double) -> Date { Date(timeIntervalSince1970: 1_748_779_200 + seconds) }

    /// Feeds live fixes of receiver seconds `second` arriving at monotonic seconds `arrival`; their delays, in ms.
    static func delays(_ filter: inout ReceiverClockFilter, _ fixes: [(second: Double, arrival: Double)]) -> [Int] {
        fixes.map { fix in
            let delay = filter.delay(ofLiveFixAt: time(fix.second), arrivedAt: .seconds(fix.arrival))
            return Int((delay / .milliseconds(1)).rounded())
        }
    }

    @Test func fixesArrivingAtTheirPaceHaveNoDelay() {
        var filter = ReceiverClockFilter()
        // A 1 Hz receiver, its reports taking 80 to 120 ms: each is measured against the fastest so far. The third
        // is judged by the line through the first two, which their jitter tilts: 80 ms, not 40; from the fourth on,
        // the line lies under the fastest.
        let fixes = (0..<10).map { second -> (second: Double, arrival: Double) in
            let transit = second % 2 == 0 ? 0.12 : 0.08
            return (Double(second), 500 + Double(second) + transit)
        }
        let delays = Self.delays(&filter, fixes)
        #expect(delays == [0, 0, 80, 0, 40, 0, 40, 0, 40, 0])
    }

    @Test func aBacklogBurstGetsEachFixItsOwnLag() {
        var filter = ReceiverClockFilter()
        _ = Self.delays(&filter, (0..<5).map { (Double($0), 1000 + Double($0)) })
        // gpsd stopped for 6 s: the fixes of seconds 5 to 11 come in one burst at 1011.5 s, then live ones again.
        let burst = Self.delays(&filter, (5...11).map { (Double($0), 1011.5) })
        #expect(burst == [6500, 5500, 4500, 3500, 2500, 1500, 500])
        #expect(Self.delays(&filter, [(12, 1012.01), (13, 1013)]) == [10, 0])
    }

    @Test func severalReportsOfAnEpochAgeFromItsFirst() {
        var filter = ReceiverClockFilter()
        // gpsd sends a TPV for the GGA, then again for the RMC of the same second, 300 ms later.
        #expect(Self.delays(&filter, [(0, 50), (0, 50.3), (1, 51), (1, 51.3)]) == [0, 300, 0, 300])
    }

    @Test func aReceiverTimeSteppingBackStartsAfresh() {
        var filter = ReceiverClockFilter()
        _ = Self.delays(&filter, (0..<5).map { (Double($0), 100 + Double($0)) })
        // The replay starts over at second 0 (or the receiver's clock jumps back an hour): that fix is new evidence.
        #expect(Self.delays(&filter, [(0, 105), (1, 106), (2, 107.25), (-3600, 108)]) == [0, 0, 250, 0])
    }

    @Test func aReceiverTimeSteppingForwardIsNoDelay() {
        var filter = ReceiverClockFilter()
        _ = Self.delays(&filter, (0..<5).map { (Double($0), 100 + Double($0)) })
        // A week-rollover fix: 1024 weeks later by the receiver, a second later by the arrival.
        #expect(Self.delays(&filter, [(619_315_200, 105), (619_315_201, 106.1)]) == [0, 100])
    }

    @Test func aDriftingReceiverClockIsFollowedWithinTheWindow() {
        var filter = ReceiverClockFilter()
        // Receiver time running 200 ppm slow against the monotonic clock for an hour, reports 100 ms on their way.
        var worst = 0
        for second in 0..<3600 {
            let arrival = 10 + Double(second) * 1.000_2 + 0.1
            worst = max(worst, Self.delays(&filter, [(Double(second), arrival)])[0])
        }
        // The line follows the drift: no fix seems delayed, however long the run.
        #expect(worst == 0, "\(worst) ms")
        #expect(filter.buckets.count <= Int(ReceiverClockFilter.window / ReceiverClockFilter.bucketWidth) + 1)
    }

    @Test func aHeldFixIsJudgedByTheLiveFixesEvidence() {
        var filter = ReceiverClockFilter()
        #expect(filter.delay(ofHeldFixAt: Self.time(3), arrivedAt: .seconds(110)) == nil, "no live fix yet")
        _ = Self.delays(&filter, (0..<10).map { (Double($0), 100 + Double($0)) })
        // gpsd held second 3's fix until 110 s: 7 s after it would have come.
        #expect(filter.delay(ofHeldFixAt: Self.time(3), arrivedAt: .seconds(110)) == .seconds(7))
        // It teaches the filter nothing: the next live fix is still judged against the fastest live one.
        #expect(Self.delays(&filter, [(10, 110.2)]) == [200])
        // A held fix too far beyond the evidence (a day later by the receiver) cannot be judged.
        #expect(filter.delay(ofHeldFixAt: Self.time(86_400), arrivedAt: .seconds(111)) == nil)
    }

    @Test func aSystemClockAYearOffChangesNothing() {
        // The manager's estimate uses the monotonic clock and the receiver's time only: through the epoch assembly,
        // arrivals whose wall clock is a year behind the receiver's give the same delays as a right one.
        func delays(wallClockOffBy offset: TimeInterval) -> [Duration?] {
            var assembly = EpochAssembly()
            return (0..<8).map { second in
                let arrivalTime = second < 3 ? Double(second) : 6   // a 3-second stall, then a burst
                let arrival = Location.Arrival(
                    instant: .now, date: Self.time(arrivalTime).addingTimeInterval(offset), delay: nil)
                let outcome = assembly.assemble(
                    Location.sample(second: second), origin: .live, now: .seconds(1000 + arrivalTime), arrival: arrival)
                guard case .accepted(let location, _, _) = outcome else { return nil }
                return location.arrival?.delay
            }
        }
        let right = delays(wallClockOffBy: 0)
        #expect(right == [0, 0, 0, 3, 2, 1, 0, 0].map { Duration.seconds($0) })
        #expect(delays(wallClockOffBy: -365 * 86_400) == right)
        #expect(delays(wallClockOffBy: 20 * 365 * 86_400) == right)
    }
}

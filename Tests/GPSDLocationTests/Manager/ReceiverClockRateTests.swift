import Foundation
@testable import GPSDLocation
import Testing

/// Ages whatever rate the receiver's clock runs at against the monotonic clock: a simulator or a replay 20 %
/// slow or fast, a receiver drifting by parts per million. Synthetic arrivals, each with its true delay.
@Suite("The receiver clock filter: a clock of any rate")
struct ReceiverClockRateTests {
    /// A fix as the manager gets it, and how long it truly took beyond the fastest transit.
    struct Arrival {
        var second: Double
        var arrival: Double
        var trueDelay: Double
        var isBacklog = false
    }

    /// A receiver reporting `hertz` times a receiver second for `seconds` receiver seconds, its clock running at
    /// `rate` receiver seconds a monotonic second; each report on its way 50 to 150 ms (a fixed pseudo-random
    /// sequence). If `stall` is given, gpsd stops for that many monotonic seconds from monotonic second `from`:
    /// what the receiver reports meanwhile arrives in one burst when it goes on, 1 ms apart.
    static func arrivals(
        rate: Double, hertz: Int = 1, seconds: Int, stall: (from: Double, length: Double)? = nil
    ) -> [Arrival] {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        var burst = 0.0
        return (0..<(seconds * hertz)).map { report in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let transit = 0.05 + 0.1 * Double(state >> 11) / Double(1 << 53)
            let second = Double(report) / Double(hertz)
            let measured = 100 + second / rate
            var arrival = measured + transit
            var isBacklog = false
            if let stall, arrival >= stall.from, arrival < stall.from + stall.length {
                burst = max(burst, stall.from + stall.length)
                arrival = burst
                burst += 0.001
                isBacklog = true
            }
            return Arrival(second: 1_748_779_200 + second, arrival: arrival, trueDelay: arrival - measured - 0.05,
                           isBacklog: isBacklog)
        }
    }

    /// Each fix's delay by a fresh filter fed `fixes`, in seconds, with the fix.
    static func delays(_ fixes: [Arrival], filter: inout ReceiverClockFilter) -> [(fix: Arrival, delay: Double)] {
        fixes.map { fix in
            let delay = filter.delay(ofLiveFixAt: Date(timeIntervalSince1970: fix.second), arrivedAt: .seconds(fix.arrival))
            return (fix, delay.timeInterval)
        }
    }

    static func describe(_ delays: [(fix: Arrival, delay: Double)]) -> String {
        delays.map { String(format: "%.0f: %.3f (true %.3f)", $0.fix.second - 1_748_779_200, $0.delay, $0.fix.trueDelay) }
            .joined(separator: "; ")
    }

    @Test("a clock 20 % slow, 20 % fast or right, reports at 1 and 5 Hz: each age within jitter of the true delay",
          arguments: [0.8, 1.0, 1.2], [1, 5])
    func steadyAtAnyRate(rate: Double, hertz: Int) {
        var filter = ReceiverClockFilter()
        let delays = Self.delays(Self.arrivals(rate: rate, hertz: hertz, seconds: 120), filter: &filter)
        // Until two seconds are in, the rate is taken as one monotonic second a receiver second: 20 % off, 0.2 s
        // a second. Then the transits, spread over 100 ms, are all that is off: a fix's delay is measured against
        // the fastest recent ones.
        let worst = delays.map { abs($0.delay - $0.fix.trueDelay) }.max() ?? .infinity
        #expect(worst < 0.25, "\(Self.describe(delays))")
        let steady = delays.dropFirst(10 * hertz)
        #expect(steady.allSatisfy { abs($0.delay - $0.fix.trueDelay) < 0.1 }, "\(Self.describe(Array(steady)))")
        #expect(abs(filter.line!.rate - 1 / rate) < 0.002, "the rate learned: \(filter.line!.rate)")
    }

    @Test("an 8 s stall under a clock 20 % slow, 20 % fast or right: the backlog's ages are its own, the others' small",
          arguments: [0.8, 1.0, 1.2], [12.0, 40.0])
    func stallAtAnyRate(rate: Double, stalledAt: Double) {
        var filter = ReceiverClockFilter()
        let fixes = Self.arrivals(rate: rate, seconds: 120, stall: (100 + stalledAt, 8))
        let delays = Self.delays(fixes, filter: &filter)
        let backlog = delays.filter(\.fix.isBacklog)
        #expect(backlog.count >= 6, "the stall held a backlog: \(Self.describe(backlog))")
        #expect(backlog.first.map { $0.fix.trueDelay > 7 } == true, "the oldest waited the stall")
        for fix in delays {
            #expect(abs(fix.delay - fix.fix.trueDelay) < 0.5, "\(Self.describe(delays))")
        }
        // Before and after the burst, as fresh as without a stall.
        let live = delays.filter { !$0.fix.isBacklog }.dropFirst(3)
        #expect(live.allSatisfy { abs($0.delay - $0.fix.trueDelay) < 0.15 }, "\(Self.describe(Array(live)))")
        #expect(abs(filter.line!.rate - 1 / rate) < 0.005, "the burst did not bend the rate: \(filter.line!.rate)")
    }

    @Test func aReceiverDrifting500PPMIsFollowedExactly() {
        // 500 ppm fast (as fast as NTP slews), for an hour, each report 100 ms on its way: one line.
        var filter = ReceiverClockFilter()
        var worst = 0.0
        for second in 0..<3600 {
            let arrival = 10 + Double(second) / 1.000_5 + 0.1
            let delay = filter.delay(ofLiveFixAt: ReceiverClockFilterTests.time(Double(second)), arrivedAt: .seconds(arrival))
            worst = max(worst, delay.timeInterval)
        }
        #expect(worst < 0.000_1, "\(worst) s")
        #expect(abs(filter.line!.rate - 1 / 1.000_5) < 1e-6)
    }

    @Test func aBurstLongerThanTheWindowDoesNotStopTheClock() {
        // 40 s of a 20 %-slow clock's fixes held and sent at once: the window holds only the burst, whose fixes all
        // arrived at one instant, which is no clock's rate. The rate learned before is kept, and the fixes after the
        // burst are fresh.
        var filter = ReceiverClockFilter()
        let fixes = Self.arrivals(rate: 0.8, seconds: 240, stall: (150, 50))
        let delays = Self.delays(fixes, filter: &filter)
        let after = delays.drop { !$0.fix.isBacklog }.drop(while: \.fix.isBacklog).dropFirst()
        #expect(after.count > 60)
        #expect(after.allSatisfy { abs($0.delay - $0.fix.trueDelay) < 0.15 }, "\(Self.describe(Array(after)))")
        #expect(abs(filter.line!.rate - 1.25) < 0.005, "\(filter.line!.rate)")
    }

    @Test func aTimeSteppingBackStartsAfreshAndKeepsTheRate() {
        // A replay at a 20 %-slow pace starts over: its first fix counts as undelayed, and the rate is the same
        // clock's, so the next fixes are judged right at once.
        var filter = ReceiverClockFilter()
        let first = Self.arrivals(rate: 0.8, seconds: 60)
        _ = Self.delays(first, filter: &filter)
        let again = Self.arrivals(rate: 0.8, seconds: 20).map { fix in
            var fix = fix
            fix.arrival += first.last!.arrival - 100 + 1
            return fix
        }
        let delays = Self.delays(again, filter: &filter)
        #expect(delays[0].delay == 0)
        #expect(delays.dropFirst().allSatisfy { abs($0.delay - $0.fix.trueDelay) < 0.12 }, "\(Self.describe(delays))")
    }

    @Test func aHeldFixIsJudgedAtTheClocksRate() {
        // A 20 %-slow clock: receiver second 30, held by gpsd, comes with the live fix of second 39, 11.25 s
        // after it was measured.
        var filter = ReceiverClockFilter()
        let fixes = (0..<40).map { (second: Double($0), arrival: 100 + Double($0) * 1.25 + 0.1) }
        for fix in fixes {
            _ = filter.delay(ofLiveFixAt: ReceiverClockFilterTests.time(fix.second), arrivedAt: .seconds(fix.arrival))
        }
        let held = filter.delay(ofHeldFixAt: ReceiverClockFilterTests.time(30), arrivedAt: .seconds(fixes[39].arrival))
        #expect(held.map { abs($0.timeInterval - 11.25) < 0.001 } == true, "\(held as Any)")
    }
}

import Foundation
@testable import GPSDCore
import GPSDLocation
import GPSDTestSupport
import Testing

/// ``ReplayPacer``: the pause before each report of a replay, from the recorded fix times and the monotonic
/// time it is asked at (given by the test, so every delay is exact).
@Suite("ReplayPacer")
struct ReplayPacerTests {
    /// 2025-06-01T12:00:00Z.
    private static let epoch = 1_748_779_200.0

    private func fix(_ second: Double) -> GPSDReport {
        var location = Location.sample(second: 0)
        location.timestamp = Date(timeIntervalSince1970: Self.epoch + second)
        return .fix(location)
    }

    @Test func paceSpeeds() {
        #expect(ReplayPace.realTime.speed == 1)
        #expect(ReplayPace.accelerated(by: 10).speed == 10)
        #expect(ReplayPace.accelerated(by: 0.5).speed == 0.5)
        #expect(ReplayPace.asFastAsPossible.speed == nil)
        for nonsense in [0, -2, Double.infinity, .nan] {
            #expect(ReplayPace.accelerated(by: nonsense).speed == nil)
        }
    }

    /// The delays a fresh pacer at `pace` asks for before each report, each asked at its time on the monotonic
    /// clock (by default all at once).
    private func delays(_ pace: ReplayPace, _ reports: [GPSDReport], at times: [Duration]? = nil) -> [Duration?] {
        var pacer = ReplayPacer(pace: pace)
        return zip(reports, times ?? reports.map { _ in .zero }).map { pacer.delay(before: $0, now: $1) }
    }

    @Test func realTimeWaitsTheRecordedGap() {
        #expect(delays(.realTime, [fix(0), fix(1)]) == [nil, .seconds(1)])
        // Asked 0.25 s after the first: 0.75 s are left.
        #expect(delays(.realTime, [fix(0), fix(1)], at: [.zero, .milliseconds(250)]) == [nil, .milliseconds(750)])
        // Asked late: no wait.
        #expect(delays(.realTime, [fix(0), fix(1)], at: [.zero, .seconds(2)]) == [nil, nil])
    }

    @Test func acceleratedDividesTheGap() {
        // 10 recorded seconds are 2.5 s at 4×; one more is 0.25 s after that (factors exact in binary).
        #expect(delays(.accelerated(by: 4), [fix(0), fix(10), fix(11)]) == [nil, .seconds(2.5), .seconds(2.75)])
        #expect(delays(.accelerated(by: 8), [fix(0), fix(1)]) == [nil, .milliseconds(125)])
    }

    @Test func asFastAsPossibleNeverWaits() {
        let result = delays(.asFastAsPossible, (0..<5).map { fix(Double($0) * 60) })
        #expect(result == [nil, nil, nil, nil, nil])
    }

    @Test func backwardsJumpStartsOver() {
        // The log looped after 11; the second pair is asked 5 s later.
        let result = delays(.realTime, [fix(10), fix(11), fix(5), fix(6)], at: [.zero, .zero, .seconds(5), .seconds(5)])
        #expect(result == [nil, .seconds(1), nil, .seconds(1)])
    }

    @Test func gapOverAnHourStartsOver() {
        #expect(delays(.realTime, [fix(0), fix(3601), fix(3602)]) == [nil, nil, .seconds(1)])
    }

    @Test func reportsWithoutTimeDoNotWait() {
        let noFixLater = GPSDReport.noFix(device: "/dev/ttyUSB0", time: Date(timeIntervalSince1970: Self.epoch + 1))
        let result = delays(.realTime, [
            .sky(SatelliteCount(visible: 1, used: 1)), .noFix(device: nil, time: nil), fix(0), .version("3.22"),
            noFixLater,
        ])
        #expect(result == [nil, nil, nil, nil, .seconds(1)])
    }
}

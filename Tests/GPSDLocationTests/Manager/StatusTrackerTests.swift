@testable import GPSDLocation
import GPSDTestSupport
import Testing

/// The status a manager reports, from its sessions' reports, as a value: each input returns the new status if it
/// changed, `nil` if not.
@Suite("Status tracker, as a value")
struct StatusTrackerTests {
    @Test func aReportThatChangesNothingSaysNothingUnlessItEndsASilence() {
        var tracker = StatusTracker()
        #expect(tracker.connected() == .connected(gpsdVersion: nil))
        #expect(tracker.reportArrived() == nil)
        #expect(tracker.stale(for: .seconds(5)) == .stale(silentFor: .seconds(5)))
        #expect(tracker.reportArrived() == .connected(gpsdVersion: nil), "the silence is over")
        #expect(tracker.reportArrived() == nil)
    }

    @Test func fixesOfOneKindSayItOnceAndAgainAfterASilenceOrAChange() {
        var tracker = StatusTracker()
        let fix = Location.sample(second: 1)
        #expect(tracker.fix(fix) == .fix(fix.fix, fix.status))
        #expect(tracker.fix(.sample(second: 2)) == nil)
        var differential = Location.sample(second: 3)
        differential.status = .dgps
        #expect(tracker.fix(differential) == .fix(differential.fix, .dgps))
        #expect(tracker.stale(for: .seconds(5)) != nil)
        #expect(tracker.fix(.sample(second: 4)) == .fix(fix.fix, fix.status))
        #expect(tracker.current == .fix(fix.fix, fix.status))
    }

    @Test func aReceiverGoneOrNoneIsNotMadeStaleBySilence() {
        var tracker = StatusTracker()
        _ = tracker.connected()
        #expect(tracker.device("/dev/ttyUSB0", active: false) == .deviceGone(device: "/dev/ttyUSB0"))
        #expect(tracker.stale(for: .seconds(5)) == nil)
        #expect(tracker.current == .deviceGone(device: "/dev/ttyUSB0"))
        #expect(tracker.devices(count: 0) == .noDevice)
        #expect(tracker.stale(for: .seconds(5)) == nil)
        #expect(tracker.device("/dev/ttyUSB0", active: true) == .waitingForFix(satellites: nil))
        #expect(tracker.stale(for: .seconds(5)) == .stale(silentFor: .seconds(5)))
    }
}

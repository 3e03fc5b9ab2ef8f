import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// Corners of the delegate manager that the main suites do not reach: filter state across sessions, and gpsd's
/// ERROR reports.
@Suite("LocationManager: edge cases", .timeLimit(.minutes(1)))
struct LocationManagerEdgeCaseTests {
    @Test func distanceFilterMeasuresFromThisSessionsFixes() {
        let source = ScriptedSource()
        let manager = LocationManager(source: source, clock: ManualManagerClock())
        let delegate = DelegateRecorder()
        manager.delegate = delegate
        manager.distanceFilter = 5
        let here = Location.sample(second: 1, metresPerSecond: 0)
        let stillHere = Location.sample(second: 2, metresPerSecond: 0)

        manager.startUpdatingLocation()
        source.send(here)
        manager.delegateQueue.sync {}   // delivered before the stop (a stop drops what is still queued)
        manager.stopUpdatingLocation()
        manager.startUpdatingLocation()
        source.send(stillHere)
        manager.delegateQueue.sync {}
        #expect(delegate.locations == [here, stillHere], "the first fix of a new session is always delivered")
    }

    @Test func aOneShotFixDoesNotMoveTheDistanceFilter() {
        let source = ScriptedSource()
        let manager = LocationManager(source: source, clock: ManualManagerClock())
        let delegate = DelegateRecorder()
        manager.delegate = delegate
        manager.distanceFilter = 5
        manager.requestLocation()
        source.send(Location.sample(second: 1, metresPerSecond: 0))
        manager.startUpdatingLocation()
        let next = Location.sample(second: 2, metresPerSecond: 0)
        source.send(next)
        manager.delegateQueue.sync {}
        #expect(delegate.locations.count == 2)
        #expect(delegate.locations.last == next)
    }

    @Test func gpsdErrorReportFailsTheRunWithProtocolError() {
        let source = ScriptedSource()
        let manager = LocationManager(source: source, clock: ManualManagerClock())
        let delegate = DelegateRecorder()
        manager.delegate = delegate
        manager.startUpdatingLocation()
        source.send(.report(.error("No such device as /dev/nonexistent")))
        manager.delegateQueue.sync {}
        #expect(delegate.errors.map(\.code) == [.protocolError])
        #expect(delegate.errors.first?.message.contains("/dev/nonexistent") == true)
        #expect(!source.isRunning, "the failed run was stopped")
    }
}

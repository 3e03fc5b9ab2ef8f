import Foundation
@testable import GPSDLocation
import GPSDTestSupport
import Testing

/// Corners of the managers that the main suites do not reach: filter state across sessions, gpsd's ERROR
/// reports, ends of earlier runs, satellite streams across failures, and durations meaning "never".
@Suite("Edge cases", .timeLimit(.minutes(1)))
struct EdgeCaseTests {
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

    @Test func satelliteUpdatesOutliveAFailedWatch() async throws {
        let source = ScriptedSource()
        let gps = AsyncLocationManager(manager: LocationManager(source: source, clock: ManualManagerClock()))
        var satellites = gps.satelliteUpdates().makeAsyncIterator()
        let first = Task { try await gps.requestLocation(timeout: .seconds(60)) }
        await source.waitForOpening(count: 1)
        source.send(.report(.sky(SatelliteCount(visible: 9, used: 0))))
        #expect(await satellites.next() == SatelliteCount(visible: 9, used: 0))
        source.send(.failed(LocationError(.connectionLost, "gone")))
        _ = await first.result
        let second = Task { try await gps.requestLocation(timeout: .seconds(60)) }
        await source.waitForOpening(count: 2)
        source.send(.report(.sky(SatelliteCount(visible: 9, used: 7))))
        #expect(await satellites.next() == SatelliteCount(visible: 9, used: 7), "still streaming after the failure")
        source.send(Location.sample(second: 1))
        _ = try await second.value
    }

    @Test func durationsMeaningNeverDoNotTrap() throws {
        SystemManagerClock().schedule(after: .seconds(Int64.max)) {}
        let pipe = try WakePipe()
        pipe.signal()
        #expect(try pipe.wait(for: nil, timeout: .seconds(Int64.max)) == false, "woken by the signal, not timed out")
    }
}


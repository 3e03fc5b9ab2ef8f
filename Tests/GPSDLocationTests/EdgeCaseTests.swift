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

    @Test func theEndOfAnEarlierRunLeavesLaterWaitersAlone() async throws {
        var machine = AsyncLocationStateMachine()
        let early = machine.makeID(), late = machine.makeID()
        let (earlyWaiter, earlyTask) = await waiter(run: 1)
        let (lateWaiter, lateTask) = await waiter(run: 2)
        _ = machine.register(early, earlyWaiter)
        _ = machine.register(late, lateWaiter)
        let (resumptions, _) = machine.end(run: 1, with: LocationError(.connectionLost, "run 1 lost"))
        #expect(resumptions.count == 1)
        #expect(machine.waiters.keys.sorted() == [late])
        // Resume what was taken out, and the one left, so no continuation leaks.
        for resumption in resumptions { resumption.continuation.resume(with: resumption.result) }
        let cancelled = machine.cancel(late)
        let rest = try #require(cancelled)
        rest.continuation.resume(with: rest.result)
        let earlyError = await #expect(throws: LocationError.self) { try await earlyTask.value }
        #expect(earlyError?.code == .connectionLost)
        await #expect(throws: CancellationError.self) { try await lateTask.value }
    }

    /// A waiter whose continuation belongs to a task that waits for it.
    private func waiter(run: Int) async -> (AsyncLocationStateMachine.Waiter, Task<Location, any Error>) {
        let (handOver, continuation) = AsyncStream.makeStream(of: AsyncLocationStateMachine.Continuation.self)
        let task = Task { try await withCheckedThrowingContinuation { continuation.yield($0) } }
        var iterator = handOver.makeAsyncIterator()
        let waiting = await iterator.next()!
        return (.init(continuation: waiting, run: run, desiredAccuracy: nil, maximumAge: .zero), task)
    }

    @Test func satelliteUpdatesOutliveAFailedWatch() async throws {
        let source = ScriptedSource()
        let gps = AsyncLocationManager(manager: LocationManager(source: source, clock: ManualManagerClock()))
        var satellites = gps.satelliteUpdates().makeAsyncIterator()
        let first = Task { try await gps.requestLocation(timeout: .seconds(60)) }
        await source.waitForStart(count: 1)
        source.send(.report(.sky(SatelliteCount(visible: 9, used: 0))))
        #expect(await satellites.next() == SatelliteCount(visible: 9, used: 0))
        source.send(.failed(LocationError(.connectionLost, "gone")))
        _ = await first.result
        let second = Task { try await gps.requestLocation(timeout: .seconds(60)) }
        await source.waitForStart(count: 2)
        source.send(.report(.sky(SatelliteCount(visible: 9, used: 7))))
        #expect(await satellites.next() == SatelliteCount(visible: 9, used: 7), "still streaming after the failure")
        source.send(Location.sample(second: 1))
        _ = try await second.value
    }

    @Test func durationsMeaningNeverDoNotTrap() {
        SystemManagerClock().schedule(after: .seconds(Int64.max)) {}
        let pipe = WakePipe()
        pipe.signal()
        #expect(pipe.wait(readable: nil, timeout: .seconds(Int64.max)) == false, "woken by the signal, not timed out")
    }
}


import Foundation
@testable import GPSDLocation
import GPSDTestSupport
import Testing

/// What the manager tells of the conditions fixes come in: a filter that rejects everything, satellite counts that
/// went with their receiver or session, a held fix that says nothing of whether fixes come, and what a one-shot
/// waited for when it times out.
@Suite("LocationManager: conditions told true", .timeLimit(.minutes(1)))
struct ConditionTests: ManagerTesting {
    let rig = ManagerRig(reconnect: ReconnectPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(1), jitter: 0))

    /// Fix `second`, `accuracy` metres, at monotonic second `second` of the manual clock.
    private func send(_ second: Int, accuracy: Double) {
        var fix = Location.sample(second: second)
        fix.horizontalAccuracy = accuracy
        source.send(fix)
        clock.advance(by: .seconds(1))
    }

    @Test func aDelegateFilteredToSilenceIsToldOnceWithTheBestSeen() {
        manager.staleTimeout = .seconds(5)
        manager.desiredAccuracy = 10
        manager.startUpdatingLocation()
        source.send(.connected)
        for second in 0..<12 { send(second, accuracy: second == 2 ? 17.2 : 23) }
        drain()
        #expect(delegate.locations.isEmpty)
        #expect(delegate.rejections.map(\.description) == ["no fix within 10.0 m for 5 s: the best was ±17.2 m"])
        send(12, accuracy: 8)
        for second in 13..<30 { send(second, accuracy: 23) }
        drain()
        #expect(delegate.locations.count == 1)
        #expect(delegate.rejections.count == 2, "told again after a fix passed and 5 s of rejections followed")
    }

    @Test func aGapInTheFixesStartsTheRejectionAfresh() {
        manager.staleTimeout = .seconds(5)
        manager.desiredAccuracy = 10
        manager.startUpdatingLocation()
        source.send(.connected)
        for second in 0..<3 { send(second, accuracy: 23) }
        clock.advance(by: .seconds(60))   // the receiver was silent a minute
        for second in 63..<66 { send(second, accuracy: 23) }
        drain()
        #expect(delegate.rejections.isEmpty, "3 s of rejections, twice, is not 5 s")
        for second in 66..<70 { send(second, accuracy: 23) }
        drain()
        #expect(delegate.rejections.map(\.duration) == [.seconds(5)])
    }

    @Test func aTimelineIsToldWhenItsRejectionIsOverEvenIfNoFixPassesItsDistanceFilter() async throws {
        let rig = AsyncRig()
        rig.gps.manager.staleTimeout = .seconds(2)
        let updates = rig.gps.liveUpdates(desiredAccuracy: 10, distanceFilter: 1_000)
        await rig.source.waitForOpening()
        rig.source.send(.connected)
        var first = Location.sample(second: 0, metresPerSecond: 0, accuracy: 4)
        first.horizontalAccuracy = 4
        rig.source.send(first)
        for second in 1...4 {
            rig.managerClock.advance(by: .seconds(1))
            rig.source.send(Location.sample(second: second, metresPerSecond: 0, accuracy: 30))
        }
        rig.managerClock.advance(by: .seconds(1))
        rig.source.send(Location.sample(second: 5, metresPerSecond: 0, accuracy: 4))   // held back: not 1 km away
        var staleness: [Bool] = []
        for try await update in updates where update.rejection != nil || !staleness.isEmpty {
            staleness.append(update.isStale)
            if !update.isStale { break }
        }
        #expect(staleness == [true, false])
    }

    @Test func aDelegateWithoutADesiredAccuracyIsNeverTold() {
        manager.staleTimeout = .seconds(1)
        manager.startUpdatingLocation()
        for second in 0..<5 { send(second, accuracy: 500) }
        drain()
        #expect(delegate.locations.count == 5 && delegate.rejections.isEmpty)
    }

    @Test func aReceiverThatGoesTakesItsSatelliteCountWithIt() {
        manager.startUpdatingLocation()
        source.send(.connected)
        source.send(.report(.devices(count: 1)))
        source.send(.report(.sky(SatelliteCount(visible: 10, used: 9))))
        source.send(Location.sample(second: 1))
        source.send(.report(.device(path: "/dev/test", active: false)))
        #expect(manager.satellites == nil)
        source.send(.report(.device(path: "/dev/test", active: true)))
        drain()
        #expect(manager.status == .waitingForFix(satellites: nil), "not the 9 of 10 from before it went")
        #expect(delegate.statuses.suffix(2) == [.deviceGone(device: "/dev/test"), .waitingForFix(satellites: nil)])
    }

    @Test func aSessionThatEndsTakesItsSatelliteCountWithIt() async {
        manager.startUpdatingLocation()
        await source.waitForOpening()
        source.send(.connected)
        source.send(.report(.devices(count: 1)))
        source.send(.report(.sky(SatelliteCount(visible: 10, used: 9))))
        source.send(.failed(LocationError(.connectionLost, "lost")))
        #expect(manager.satellites == nil)
        clock.advance(by: .seconds(1))
        await source.waitForOpening(count: 2)
        source.send(.connected)
        source.send(.report(.devices(count: 1)))
        #expect(manager.status == .waitingForFix(satellites: nil))
        manager.stopUpdatingLocation()
    }

    @Test func aHeldFixSaysNothingOfWhetherFixesCome() {
        manager.startUpdatingLocation()
        source.send(.connected)
        source.send(.report(.devices(count: 1)))
        let held = Location.sample(second: 1)
        source.send(.report(.poll(time: held.timestamp.addingTimeInterval(15), reports: [.fix(held)])))
        drain()
        #expect(delegate.locations == [held], "the delegate takes the newest fix there is")
        #expect(manager.status == .waitingForFix(satellites: nil))
        #expect(!delegate.statuses.contains(.fix(.threeDimensional, .gps)))
    }
}

/// A one-shot's timeout says what it waited for.
@Suite("Async requests: what a timeout says", .timeLimit(.minutes(1)))
struct TimeoutMessageTests {
    @Test func aHeldFixOfUnknownAgeIsNamedInTheTimeout() async throws {
        let rig = AsyncRig()
        let request = rig.request(timeout: .seconds(4), maximumAge: .seconds(5))
        await rig.source.waitForOpening()
        rig.source.send(.connected)
        let held = Location.sample(second: 1)
        // The log is dated a year from gpsd's clock: the held fix's age cannot be known.
        rig.source.send(.report(.poll(time: held.timestamp.addingTimeInterval(-365 * 86_400), reports: [.fix(held)])))
        await rig.clock.waitForSleepers(1)
        rig.clock.advance(by: .seconds(4))
        guard case .error(let error) = await request.value else {
            Issue.record("the request did not time out")
            return
        }
        #expect(error.code == .timedOut)
        #expect(error.message == "no fix in 4.0 seconds: connected, no receiver has reported yet; the fix gpsd held was "
            + "of unknown age (its time is not gpsd's clock's), wanted at most 5 s")
        #expect(error.status == .connected(gpsdVersion: nil))
        #expect(error.bestLocation == held)
    }

    @Test func theBestFixIsNamedWhenNoneWasAccurateEnough() async throws {
        let rig = AsyncRig()
        let request = rig.request(timeout: .seconds(4), desiredAccuracy: 10)
        await rig.source.waitForOpening()
        rig.source.send(.connected)
        rig.source.send(Location.sample(second: 1, accuracy: 17.25))
        await rig.clock.waitForSleepers(1)
        rig.clock.advance(by: .seconds(4))
        guard case .error(let error) = await request.value else {
            Issue.record("the request did not time out")
            return
        }
        #expect(error.message == "no fix within 10.0 m in 4.0 seconds: the best fix was ±17.2 m, wanted 10.0 m")
    }
}

import Dispatch
import Foundation
import GPSDLocation
import GPSDTestSupport
import Testing

/// ``LocationManager`` driven by a ``ScriptedSource`` and a ``ManualManagerClock``: every event is sent on the
/// test's thread, every timer runs in `advance(by:)`, and `drain()` waits for the delegate queue to be empty.
@Suite("LocationManager")
struct LocationManagerTests {
    let source = ScriptedSource()
    let clock = ManualManagerClock()
    let manager: LocationManager
    let delegate = DelegateRecorder()

    init() {
        manager = LocationManager(source: source, clock: clock)
        manager.delegate = delegate
    }

    /// Waits until every callback enqueued so far has run. Deliveries are enqueued synchronously by `send`.
    private func drain() { manager.delegateQueue.sync {} }

    private func fixes(_ seconds: ClosedRange<Int>, metresPerSecond: Double = 10) -> [Location] {
        seconds.map { Location.sample(second: $0, metresPerSecond: metresPerSecond) }
    }

    // MARK: Continuous updates

    @Test func startUpdatingStartsTheSourceOnce() {
        #expect(source.openCount == 0)
        manager.startUpdatingLocation()
        manager.startUpdatingLocation()
        #expect(source.openCount == 1)
        #expect(source.isRunning)
        #expect(source.closeCount == 0)
    }

    @Test func eachFixReachesTheDelegateOnceAndInOrder() {
        manager.startUpdatingLocation()
        let sent = fixes(1...5)
        for fix in sent { #expect(source.send(fix)) }
        drain()
        #expect(delegate.events == sent.map { .locations([$0]) })
    }

    @Test func callbacksComeOnTheDelegateQueue() {
        let queue = DispatchQueue(label: "test.delegate")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 42)
        let onQueue = Locked<[Int?]>([])
        let manager = LocationManager(source: source, clock: clock, delegateQueue: queue)
        let delegate = DelegateRecorder { _, _ in onQueue.withLock { $0.append(DispatchQueue.getSpecific(key: key)) } }
        manager.delegate = delegate
        #expect(manager.delegateQueue === queue)
        manager.startUpdatingLocation()
        source.send(Location.sample(second: 1))
        source.send(.failed(LocationError(.connectionLost, "gone")))
        queue.sync {}
        #expect(onQueue.withLock { $0 } == [42, 42])
        #expect(delegate.events.count == 2)
    }

    @Test func repeatedFixOfTheSameEpochIsDeliveredOnce() {
        manager.startUpdatingLocation()
        let fix = Location.sample(second: 1)
        var bare = fix
        bare.altitude = nil
        source.send(bare)
        source.send(bare)
        source.send(fix)   // adds the altitude: passes again
        source.send(fix)
        drain()
        #expect(delegate.locations == [bare, fix])
    }

    @Test func desiredAccuracyFiltersContinuousUpdates() {
        manager.desiredAccuracy = 10
        manager.startUpdatingLocation()
        let sent = [
            Location.sample(second: 1, accuracy: 50),
            Location.sample(second: 2, accuracy: nil),
            Location.sample(second: 3, accuracy: 10),
            Location.sample(second: 4, accuracy: 10.01),
            Location.sample(second: 5, accuracy: 2),
        ]
        for fix in sent { source.send(fix) }
        drain()
        #expect(delegate.locations == [sent[2], sent[4]])
        #expect(manager.location == sent[4])
    }

    @Test func distanceFilterThinsAStreamToEveryTenthFix() throws {
        manager.distanceFilter = 100
        manager.startUpdatingLocation()
        for fix in fixes(0...35) { source.send(fix) }  // 10 m apart
        drain()
        let seconds = delegate.locations.map { Int($0.timestamp!.timeIntervalSince1970) - 1_748_779_200 }
        #expect(seconds.first == 0)
        #expect((3...4).contains(seconds.count), "\(seconds)")
        for (previous, next) in zip(seconds, seconds.dropFirst()) {
            #expect((10...11).contains(next - previous), "\(seconds)")
        }
        let delivered = delegate.locations
        for (previous, next) in zip(delivered, delivered.dropFirst()) {
            #expect(next.distance(from: previous) >= 100)
        }
    }

    @Test func distanceFilterBelowTheSpacingIsExact() {
        manager.distanceFilter = 95
        manager.startUpdatingLocation()
        let sent = fixes(0...30)
        for fix in sent { source.send(fix) }
        drain()
        #expect(delegate.locations == [sent[0], sent[10], sent[20], sent[30]])
        #expect(manager.location == sent[30])   // the newest fix, whatever the filter
    }

    @Test func noDistanceFilterDeliversEveryCycle() {
        manager.startUpdatingLocation()
        let sent = fixes(0...9, metresPerSecond: 0.01)
        for fix in sent { source.send(fix) }
        drain()
        #expect(delegate.locations == sent)
    }

    // MARK: Stopping

    @Test func stopUpdatingStopsTheSourceAndCallbacks() {
        manager.startUpdatingLocation()
        source.send(Location.sample(second: 1))
        manager.stopUpdatingLocation()
        #expect(source.closeCount == 1)
        #expect(!source.isRunning)
        #expect(!source.send(Location.sample(second: 2)))
        drain()
        #expect(delegate.locations.count <= 1)
        #expect(!delegate.locations.contains(Location.sample(second: 2)))
    }

    @Test func stopDropsDeliveriesAlreadyEnqueued() {
        manager.startUpdatingLocation()
        // Holding the delegate queue, as a delegate callback does: the fix is enqueued behind us, then stopped.
        manager.delegateQueue.sync {
            source.send(Location.sample(second: 1))
            source.send(.failed(LocationError(.connectionLost, "gone")))
            manager.stopUpdatingLocation()
        }
        drain()
        #expect(delegate.events == [])
    }

    @Test func stopFromADelegateCallbackEndsCallbacksAtOnce() {
        let log = DelegateEventLog()
        let delegate = DelegateRecorder(log: log) { manager, _ in manager.stopUpdatingLocation() }
        manager.delegate = delegate
        manager.startUpdatingLocation()
        let sent = fixes(1...3)
        manager.delegateQueue.sync {
            for fix in sent { source.send(fix) }   // all three enqueued before the first is delivered
        }
        drain()
        #expect(log.events == [.locations([sent[0]])])
        #expect(source.closeCount == 1)
    }

    @Test func noCallbackAfterStopReturnsFromAnotherThread() {
        manager.startUpdatingLocation()
        for fix in fixes(1...20) { source.send(fix) }
        manager.stopUpdatingLocation()
        let countAtStop = delegate.events.count
        drain()
        #expect(delegate.events.count == countAtStop)
    }

    @Test func restartAfterStopDeliversAgain() {
        manager.startUpdatingLocation()
        source.send(Location.sample(second: 1))
        drain()
        manager.stopUpdatingLocation()
        manager.startUpdatingLocation()
        #expect(source.openCount == 2)
        #expect(source.closeCount == 1)
        source.send(Location.sample(second: 2))
        drain()
        #expect(delegate.locations == [Location.sample(second: 1), Location.sample(second: 2)])
    }

    @Test func eventsOfAnOldSessionAreIgnored() {
        manager.startUpdatingLocation()
        manager.stopUpdatingLocation()
        manager.startUpdatingLocation()
        #expect(source.openCount == 2)
        source.send(.report(.fix(Location.sample(second: 1))), toSession: 1)   // late, from the first session
        source.send(.failed(LocationError(.connectionLost, "old")), toSession: 1)
        source.send(.report(.fix(Location.sample(second: 2))), toSession: 2)
        drain()
        #expect(delegate.events == [.locations([Location.sample(second: 2)])])
        #expect(manager.location == Location.sample(second: 2))
    }

    @Test func releasingTheManagerStopsTheSource() {
        var manager: LocationManager? = LocationManager(source: source, clock: clock)
        manager?.startUpdatingLocation()
        #expect(source.isRunning)
        manager = nil
        #expect(!source.isRunning)
        #expect(source.closeCount == 1)
    }

    // MARK: One-shot requests

    @Test func requestLocationDeliversOneFixThenStops() {
        manager.requestLocation()
        #expect(source.openCount == 1)
        let first = Location.sample(second: 1)
        #expect(source.send(first))
        #expect(source.closeCount == 1)
        #expect(!source.isRunning)
        #expect(!source.send(Location.sample(second: 2)))
        drain()
        #expect(delegate.events == [.locations([first])])
    }

    @Test func requestLocationWaitsForDesiredAccuracy() {
        manager.desiredAccuracy = 10
        manager.requestLocation()
        source.send(Location.sample(second: 1, accuracy: 50))
        source.send(Location.sample(second: 2, accuracy: nil))
        #expect(source.isRunning)
        let good = Location.sample(second: 3, accuracy: 5)
        source.send(good)
        #expect(!source.isRunning)
        drain()
        #expect(delegate.events == [.locations([good])])
        #expect(manager.location == good)
    }

    @Test func requestLocationTimesOutWithTheBestLocation() throws {
        manager.desiredAccuracy = 10
        manager.requestLocation()
        #expect(clock.pendingTimerCount == 1)
        let poor = Location.sample(second: 1, accuracy: 50)
        source.send(poor)
        clock.advance(by: manager.requestTimeout - .milliseconds(1))
        drain()
        #expect(delegate.events == [])
        #expect(source.isRunning)

        clock.advance(by: .milliseconds(1))
        drain()
        #expect(delegate.events.count == 1)
        let error = try #require(delegate.errors.first)
        #expect(error.code == .locationUnknown)
        #expect(error.bestLocation == poor)
        #expect(source.closeCount == 1)
        #expect(!source.isRunning)

        // A fix after the timeout does not reach the delegate, nor does time.
        #expect(!source.send(Location.sample(second: 2, accuracy: 1)))
        clock.advance(by: manager.requestTimeout * 2)
        drain()
        #expect(delegate.events.count == 1)
    }

    @Test func requestTimeoutIsConfigurable() throws {
        #expect(manager.requestTimeout == LocationManager.defaultRequestTimeout)
        #expect(LocationManager.defaultRequestTimeout == .seconds(30))
        manager.requestTimeout = .seconds(5)
        manager.requestLocation()
        clock.advance(by: .seconds(5))
        drain()
        let error = try #require(delegate.errors.first)
        #expect(error.code == .locationUnknown)
        #expect(error.bestLocation == nil)
        #expect(delegate.events.count == 1)
    }

    @Test func requestFulfilledBeforeTheTimeoutDoesNotFailLater() {
        manager.requestLocation()
        let fix = Location.sample(second: 1)
        source.send(fix)
        clock.advance(by: manager.requestTimeout * 2)
        drain()
        #expect(delegate.events == [.locations([fix])])
    }

    @Test func secondRequestReplacesThePendingOne() throws {
        manager.requestLocation()
        clock.advance(by: .seconds(20))
        manager.requestLocation()
        #expect(source.openCount == 1)
        clock.advance(by: .seconds(10))   // the first request's deadline: replaced, so nothing
        drain()
        #expect(delegate.events == [])
        clock.advance(by: .seconds(20))   // the second's
        drain()
        #expect(delegate.errors.map(\.code) == [.locationUnknown])
        #expect(delegate.events.count == 1)
    }

    @Test func requestWhileUpdatingDeliversOnceAndKeepsUpdating() {
        manager.startUpdatingLocation()
        manager.requestLocation()
        let sent = fixes(1...3)
        for fix in sent { source.send(fix) }
        drain()
        #expect(delegate.locations == sent)
        #expect(source.closeCount == 0)
    }

    @Test func requestTimeoutWhileUpdatingKeepsTheSourceRunning() throws {
        manager.startUpdatingLocation()
        manager.requestLocation()
        clock.advance(by: manager.requestTimeout)
        #expect(source.isRunning)
        let fix = Location.sample(second: 1)
        source.send(fix)
        drain()
        #expect(delegate.errors.map(\.code) == [.locationUnknown])
        #expect(delegate.locations == [fix])
    }

    @Test func stopCancelsAPendingRequest() {
        manager.requestLocation()
        manager.stopUpdatingLocation()
        #expect(!source.isRunning)
        clock.advance(by: manager.requestTimeout)
        drain()
        #expect(delegate.events == [])
    }

    // MARK: Failures and the end of a source

    @Test func sourceFailureIsReportedOnceAndEndsUpdates() throws {
        manager.startUpdatingLocation()
        source.send(Location.sample(second: 1))
        let failure = LocationError(.connectionLost, "connection to gpsd at localhost:2947 lost: gpsd closed the connection")
        source.send(.failed(failure))
        source.send(Location.sample(second: 2))          // the scripted source still holds the handler
        source.send(.failed(LocationError(.connectionLost, "again")))
        drain()
        #expect(delegate.events == [.locations([Location.sample(second: 1)]), .failure(failure)])
        #expect(try #require(delegate.errors.first).code == .connectionLost)

        manager.startUpdatingLocation()                   // a new start connects again
        #expect(source.openCount == 2)
        source.send(Location.sample(second: 3))
        drain()
        #expect(delegate.locations.last == Location.sample(second: 3))
    }

    @Test func sourceFailureDuringARequestIsReportedOnce() {
        manager.requestLocation()
        let failure = LocationError(.gpsdUnavailable, "cannot connect to gpsd", errorNumber: ECONNREFUSED)
        source.send(.failed(failure))
        clock.advance(by: manager.requestTimeout)   // the request is over: its timer does nothing
        drain()
        #expect(delegate.events == [.failure(failure)])
    }

    @Test func finishedDuringARequestIsLocationUnknown() throws {
        manager.desiredAccuracy = 10
        manager.requestLocation()
        let poor = Location.sample(second: 1, accuracy: 80)
        source.send(poor)
        source.send(.finished)
        clock.advance(by: manager.requestTimeout)
        drain()
        #expect(delegate.events.count == 1)
        let error = try #require(delegate.errors.first)
        #expect(error.code == .locationUnknown)
        #expect(error.bestLocation == poor)
    }

    @Test func finishedEndsContinuousUpdatesQuietly() {
        manager.startUpdatingLocation()
        source.send(Location.sample(second: 1))
        source.send(.finished)
        source.send(Location.sample(second: 2))
        drain()
        #expect(delegate.events == [.locations([Location.sample(second: 1)])])
    }

    @Test func failureEventWithoutDemandIsIgnored() {
        manager.requestLocation()
        source.send(Location.sample(second: 1))   // fulfils the request and stops the source
        #expect(!source.send(.failed(LocationError(.connectionLost, "late"))))
        drain()
        #expect(delegate.errors.isEmpty)
    }

    // MARK: What the manager keeps

    @Test func locationIsTheNewestFix() {
        #expect(manager.location == nil)
        manager.desiredAccuracy = 1
        manager.startUpdatingLocation()
        let sent = [Location.sample(second: 1, accuracy: 5), Location.sample(second: 2, accuracy: 50)]
        source.send(sent[0])
        #expect(manager.location == sent[0])
        source.send(sent[1])
        #expect(manager.location == sent[1])   // even though no fix met the desired accuracy
        source.send(.report(.noFix(device: "/dev/test", time: nil)))
        #expect(manager.location == sent[1])
        manager.stopUpdatingLocation()
        #expect(manager.location == sent[1])
    }

    @Test func skippedLineCountCountsSkippedLines() {
        #expect(manager.skippedLineCount == 0)
        manager.startUpdatingLocation()
        source.send(.skippedLine)
        source.send(Location.sample(second: 1))
        source.send(.skippedLine)
        source.send(.skippedLine)
        #expect(manager.skippedLineCount == 3)
        drain()
        #expect(delegate.locations == [Location.sample(second: 1)])
    }

    @Test func noFixReportsProduceNothing() {
        manager.startUpdatingLocation()
        manager.requestLocation()
        for second in 0..<5 {
            source.send(.report(.noFix(device: "/dev/test", time: Date(timeIntervalSince1970: 1_748_779_200 + Double(second)))))
        }
        source.send(.report(.noFix(device: nil, time: nil)))
        drain()
        #expect(delegate.events == [])
        #expect(manager.location == nil)
        #expect(source.isRunning)
    }

    @Test func noFixPrefixThenFirstFix() {
        manager.requestLocation()
        for _ in 0..<3 { source.send(.report(.noFix(device: "/dev/test", time: nil))) }
        drain()
        #expect(manager.location == nil)
        #expect(delegate.events == [])
        let fix = Location.sample(second: 4)
        source.send(fix)
        drain()
        #expect(delegate.events == [.locations([fix])])
        #expect(manager.location == fix)
    }

    @Test func otherReportsProduceNothing() {
        manager.startUpdatingLocation()
        source.send(.report(.version("3.22")))
        source.send(.report(.devices(count: 1)))
        source.send(.report(.other))
        drain()
        #expect(delegate.events == [])
        #expect(manager.location == nil)
        #expect(manager.skippedLineCount == 0)
    }

    @Test func satellitesAreTheLastSkyReport() {
        #expect(manager.satellites == nil)
        manager.startUpdatingLocation()
        source.send(.report(.sky(SatelliteCount(visible: 12, used: 8))))
        source.send(.report(.sky(SatelliteCount(visible: 11, used: 9))))
        #expect(manager.satellites == SatelliteCount(visible: 11, used: 9))
        drain()
        #expect(delegate.events == [])
    }

    @Test func aSubscriptionWithAMaximumAgeAsksTheOpenSessionForTheHeldFix() {
        let idle = manager.reserveSubscription()
        manager.subscribe(idle, .oneShot(maximumAge: .seconds(1))) { _ in }
        #expect(source.openCount == 1)
        #expect(source.heldFixRequestCount == 1, "asked as soon as the session opened")
        let joining = manager.reserveSubscription()
        manager.subscribe(joining, .oneShot(maximumAge: .seconds(1))) { _ in }
        #expect(source.heldFixRequestCount == 2, "asked of the open session")
        let without = manager.reserveSubscription()
        manager.subscribe(without, .oneShot()) { _ in }
        #expect(source.heldFixRequestCount == 2, "a request without a maximum age waits for the next fix")
        for id in [idle, joining, without] { manager.unsubscribe(id) }
        #expect(!source.isRunning)
    }

    @Test func pollReplyFixIsDeliveredWithItsAge() throws {
        manager.startUpdatingLocation()
        clock.advance(by: .seconds(100))
        let fix = Location.sample(second: 5)
        let polledAt = fix.timestamp!.addingTimeInterval(1.5)
        source.send(.report(.poll(time: polledAt, reports: [.fix(fix), .noFix(device: "/dev/b", time: nil)])))
        drain()
        #expect(delegate.locations == [fix])
        let latest = try #require(manager.latestFix)
        #expect(latest.location == fix)
        #expect(latest.age == .seconds(1.5))
        clock.advance(by: .seconds(2))
        #expect(manager.latestFix?.age == .seconds(3.5))
    }

    @Test func pollFixOlderThanTheNewestIsIgnored() {
        manager.startUpdatingLocation()
        clock.advance(by: .seconds(100))
        let streamed = Location.sample(second: 10)
        source.send(streamed)
        // Another receiver's fix, 2 s old by gpsd's clock: older than what we hold.
        let other = Location.sample(second: 8, device: "/dev/other")
        source.send(.report(.poll(time: other.timestamp!.addingTimeInterval(2), reports: [.fix(other)])))
        drain()
        #expect(delegate.locations == [streamed])
        #expect(manager.location == streamed)
        #expect(manager.latestFix?.age == .zero)
    }

    // MARK: The delegate

    @Test func delegateIsHeldWeakly() {
        let log = DelegateEventLog()
        var recorder: DelegateRecorder? = DelegateRecorder(log: log)
        weak let weakRecorder = recorder
        manager.delegate = recorder
        #expect(manager.delegate === recorder)
        recorder = nil
        #expect(weakRecorder == nil)
        #expect(manager.delegate == nil)
        manager.startUpdatingLocation()
        source.send(Location.sample(second: 1))
        source.send(.failed(LocationError(.connectionLost, "gone")))
        drain()
        #expect(log.events == [])
    }

    @Test func delegateReleasedWhileADeliveryIsQueued() {
        let log = DelegateEventLog()
        var recorder: DelegateRecorder? = DelegateRecorder(log: log)
        manager.delegate = recorder
        manager.startUpdatingLocation()
        manager.delegateQueue.sync {
            source.send(Location.sample(second: 1))
            recorder = nil
        }
        drain()
        #expect(recorder == nil)
        #expect(log.events == [])
        #expect(manager.location == Location.sample(second: 1))
    }

    @Test func replacingTheDelegateRedirectsCallbacks() {
        manager.startUpdatingLocation()
        source.send(Location.sample(second: 1))
        drain()
        let second = DelegateRecorder()
        manager.delegate = second
        source.send(Location.sample(second: 2))
        drain()
        #expect(delegate.locations == [Location.sample(second: 1)])
        #expect(second.locations == [Location.sample(second: 2)])
    }
}

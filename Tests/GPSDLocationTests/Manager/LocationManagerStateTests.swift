import Dispatch
import Foundation
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// ``LocationManager`` driven by a ``ScriptedSource`` and a ``ManualManagerClock`` (see ``ManagerTesting``).
@Suite("LocationManager: what it keeps, and its delegate")
struct LocationManagerStateTests: ManagerTesting {
    let rig = ManagerRig()

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

    @Test func satellitesAreTheLastWholeEpochs() {
        #expect(manager.satellites == nil)
        manager.startUpdatingLocation()
        source.send(.report(.noFix(second: 0)))   // an epoch begins: its SKYs are seen from its start
        source.send(.report(.sky(SatelliteCount(visible: 12, used: 8))))
        #expect(manager.satellites == nil, "its epoch may bring more")
        source.send(.report(.noFix(second: 1)))
        #expect(manager.satellites == SatelliteCount(visible: 12, used: 8))
        source.send(.report(.sky(SatelliteCount(visible: 11, used: 9))))
        source.send(.report(.noFix(second: 2)))
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
        manager.settleSessions(upTo: manager.sessionNumber)   // the last gave the session back to be closed
        #expect(!source.isRunning)
    }

    @Test func aFailedOpeningLeavesNoHeldFixRequestForTheNextSession() {
        source.failNextOpening(with: LocationError(.resourceUnavailable, "no pipe"))
        let request = manager.reserveSubscription()
        let ended = Locked<[SubscriptionEvent]>([])
        manager.subscribe(request, .oneShot(maximumAge: .seconds(5))) { event in ended.withLock { $0.append(event) } }
        #expect(ended.withLock { $0.count } == 1, "the request failed with the opening")
        manager.startUpdatingLocation()
        #expect(source.openCount == 1)
        #expect(source.heldFixRequests(inSession: 1) == 0, "nobody asked this session for gpsd's held fix")
    }

    @Test func pollReplyFixIsDeliveredWithItsAge() throws {
        manager.startUpdatingLocation()
        clock.advance(by: .seconds(100))
        let fix = Location.sample(second: 5)
        let polledAt = fix.timestamp.addingTimeInterval(1.5)
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
        source.send(.report(.poll(time: other.timestamp.addingTimeInterval(2), reports: [.fix(other)])))
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

import Dispatch
import Foundation
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// ``LocationManager`` driven by a ``ScriptedSource`` and a ``ManualManagerClock`` (see ``ManagerTesting``).
@Suite("LocationManager: continuous updates and stopping")
struct LocationManagerUpdatesTests: ManagerTesting {
    let rig = ManagerRig()

    // MARK: Continuous updates

    @Test func startUpdatingStartsTheSourceOnce() {
        #expect(source.openCount == 0)
        manager.startUpdatingLocation()
        manager.startUpdatingLocation()
        #expect(source.openCount == 1)
        #expect(source.isRunning)
        #expect(source.closeCount == 0)
    }

    /// Each in a call of its own while the delegate keeps up; fixes that come while a call waits join it.
    @Test func eachFixReachesTheDelegateOnceAndInOrder() {
        manager.startUpdatingLocation()
        let sent = fixes(1...5)
        for fix in sent {
            #expect(source.send(fix))
            drain()
        }
        #expect(delegate.events == sent.map { .locations([$0]) })
        let more = fixes(6...10)
        for fix in more { #expect(source.send(fix)) }
        drain()
        #expect(delegate.locations == sent + more)
    }

    @Test func callbacksComeOnTheDelegateQueue() {
        let queue = DispatchQueue(label: "test.delegate")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 42)
        let onQueue = Locked<[Int?]>([])
        let manager = LocationManager(source: source, clock: clock, delegateQueue: queue)
        manager.reconnectPolicy = .never   // the failure then reaches the delegate
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
        let seconds = delegate.locations.map { Int($0.timestamp.timeIntervalSince1970) - 1_748_779_200 }
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
            // All enqueued before the first is delivered; the status change between keeps each fix in a call of
            // its own (a fix joins a call that waits only with no status change after it).
            source.send(sent[0])
            source.send(.report(GPSDReport.noFix(second: 2)))
            source.send(sent[2])
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
        manager?.delegateQueue.sync {}   // a callback running holds the manager until it returns
        manager = nil
        #expect(!source.isRunning)
        #expect(source.closeCount == 1)
    }
}

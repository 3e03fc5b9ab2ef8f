import Dispatch
import Foundation
import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// The five defects found before demand had one owner, each as it was reproduced. Each failed (a trap, a
/// crash, a hang, a leak, a wrong outcome) on the code before the architecture issue.
@Suite("Regressions: the five defects of the architecture issue", .timeLimit(.minutes(1)))
struct ArchitectureDefectTests {
    private let connectionLost = LocationError(.connectionLost, "connection to gpsd lost")

    // MARK: 1. A timeout meaning "never" trapped

    @Test func aRequestWithATimeoutOfInt64MaxSecondsGetsItsFixInsteadOfTrapping() async throws {
        let source = ScriptedSource()
        let gps = AsyncLocationManager(manager: LocationManager(source: source, clock: ManualManagerClock()))
        // The continuous clock, as `requestLocation(timeout:)` uses it: before, its sleep trapped on the deadline.
        // In a task group, so that the suite's time limit cancels the requests if the fix never reaches one.
        try await withThrowingTaskGroup(of: Location.self) { group in
            for _ in 0..<20 { group.addTask { try await gps.requestLocation(timeout: .seconds(Int64.max)) } }
            // Every request waits for the fix, and the session they share is open: a fix sent before it opens is
            // sent to no one (send returns false), and the requests would wait for ever.
            await source.waitForOpening()
            while gps.manager.subscriptionCount < 20, !Task.isCancelled { await Task.yield() }
            for _ in 0..<100 { await Task.yield() }   // time for any timer to start sleeping, as it did before
            let fix = Location.sample(second: 1)
            #expect(source.send(fix), "the session is open")
            for try await location in group { #expect(location == fix) }
        }
    }

    @Test func aTimeoutMeaningNeverArmsNoTimerAndEndsByCancellation() async {
        let rig = AsyncRig()
        let request = rig.request(timeout: .seconds(Int64.max))
        await rig.source.waitForOpening()
        #expect(rig.clock.sleeperCount == 0, "no timer for a century or more")
        request.cancel()
        #expect(await request.value == .cancelled)
        await rig.source.waitUntilIdle()
    }

    // MARK: 2. stopUpdatingLocation() crashed on related queues, and did not wait on a concurrent one

    @Test func stopUpdatingFromTheQueueTheDelegateQueueTargets() {
        let target = DispatchQueue(label: "target")
        let rig = ManagerRig(delegateQueue: DispatchQueue(label: "delegate", target: target))
        rig.manager.startUpdatingLocation()
        rig.source.send(Location.sample(second: 1))
        target.sync { rig.manager.stopUpdatingLocation() }   // crashed (__DISPATCH_WAIT_FOR_QUEUE__)
        rig.source.send(Location.sample(second: 2))
        target.sync {}
        #expect(!rig.source.isRunning)
        #expect(rig.delegate.locations.allSatisfy { $0 != Location.sample(second: 2) })
    }

    @Test func stopUpdatingFromASiblingQueueOfTheDelegateQueue() {
        let target = DispatchQueue(label: "target")
        let sibling = DispatchQueue(label: "sibling", target: target)
        let rig = ManagerRig(delegateQueue: DispatchQueue(label: "delegate", target: target))
        rig.manager.startUpdatingLocation()
        sibling.sync { rig.manager.stopUpdatingLocation() }  // crashed too
        #expect(!rig.source.isRunning)
    }

    @Test func stopUpdatingOnAConcurrentDelegateQueueWaitsForTheCallbackRunning() async {
        let rig = ManagerRig(delegateQueue: .global())
        let (entered, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let running = Locked(false)
        let delegate = DelegateRecorder { _, _ in
            running.withLock { $0 = true }
            entered.signal()
            release.wait()
            running.withLock { $0 = false }
        }
        rig.manager.delegate = delegate
        rig.manager.startUpdatingLocation()
        rig.source.send(Location.sample(second: 1))
        await onThread { entered.wait() }
        let stopped = Task {
            await onThread {
                rig.manager.stopUpdatingLocation()
                return running.withLock { $0 }   // a callback still running when stop returned
            }
        }
        await rig.source.waitUntilIdle()   // the stop has begun: it closed the session, and waits now
        release.signal()
        #expect(await stopped.value == false, "stopUpdatingLocation() returned while a callback still ran")
    }

    // MARK: 3. Satellite streams never ended, and kept the manager alive

    @Test func stopEndsSatelliteUpdates() async {
        let gps = AsyncLocationManager(manager: LocationManager(source: ScriptedSource(), clock: ManualManagerClock()))
        let satellites = gps.satelliteUpdates()
        let consumer = Task { for await _ in satellites {} }
        await gps.stop()
        await consumer.value   // hung before
    }

    @Test func releasingTheAsyncManagerEndsSatelliteUpdatesAndFreesTheManager() async {
        weak var weakManager: LocationManager?
        weak var weakBridge: AsyncLocationManager?
        var satellites: SatelliteUpdates?
        do {
            let manager = LocationManager(source: ScriptedSource(), clock: ManualManagerClock())
            let gps = AsyncLocationManager(manager: manager)
            (weakManager, weakBridge) = (manager, gps)
            satellites = gps.satelliteUpdates()
        }
        #expect(weakBridge == nil)
        #expect(weakManager == nil, "the satellite stream kept the LocationManager alive")
        var iterator = satellites?.makeAsyncIterator()
        #expect(await iterator?.next() == nil, "the stream ended with the manager value")
    }

    // MARK: 4. A ?POLL; asked for while the source was being restarted went to the old session

    @Test func aHeldFixRequestWhileTheSessionIsBeingReplacedGoesToTheNewSession() {
        let rig = ManagerRig()
        let manager = rig.manager
        manager.startUpdatingLocation()
        // Session 1 fails; while it is being closed, a request with a maximum age subscribes.
        rig.source.onNextClosing {
            manager.subscribe(manager.reserveSubscription(), .oneShot(maximumAge: .seconds(5))) { _ in }
        }
        rig.source.send(.failed(connectionLost))
        #expect(rig.source.openCount == 2, "the request opened the next session")
        #expect(rig.source.heldFixRequests(inSession: 1) == 0)
        #expect(rig.source.heldFixRequests(inSession: 2) == 1, "the ?POLL; went to the new session")
    }

    @Test func aHeldFixRequestWhileTheSessionOpensIsSentOnceItIsOpen() {
        let rig = ManagerRig()
        let manager = rig.manager
        rig.source.onNextOpening(.beforeOpening) {
            manager.subscribe(manager.reserveSubscription(), .oneShot(maximumAge: .seconds(5))) { _ in }
        }
        manager.startUpdatingLocation()
        #expect(rig.source.openCount == 1)
        #expect(rig.source.heldFixRequests(inSession: 1) == 1)
    }

    // MARK: 5. A request that joined the next session was failed with the previous session's error

    @Test func aSubscriptionMadeAfterASessionFailedIsNotEndedByThatFailure() {
        let rig = ManagerRig()
        let manager = rig.manager
        let late = Locked<[SubscriptionEvent]>([])
        // The first consumer, told of session 1's failure, subscribes again at once: before the failure has
        // been handled to the end (its session is still to be closed), as a retrying consumer does.
        let first = manager.reserveSubscription()
        manager.subscribe(first, .continuous()) { event in
            guard case .ended = event else { return }
            manager.subscribe(manager.reserveSubscription(), .oneShot()) { next in late.withLock { $0.append(next) } }
        }
        rig.source.send(.failed(connectionLost))
        rig.source.send(.failed(connectionLost), toSession: 1)   // a late event of the failed session
        #expect(late.withLock { $0 } == [], "not failed with session 1's error")
        #expect(rig.source.openCount == 2, "it opened session 2")
        let fix = Location.sample(second: 1)
        rig.source.send(fix)
        #expect(late.withLock { $0 } == [.location(fix)])
    }
}

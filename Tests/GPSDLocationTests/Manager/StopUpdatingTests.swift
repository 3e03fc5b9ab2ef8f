import Dispatch
import Foundation
@testable import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// What `stopUpdatingLocation()` waits for, and what it must not wait for.
@Suite("LocationManager: stopping while callbacks run", .timeLimit(.minutes(1)))
struct StopUpdatingTests {
    /// Two callbacks running at once on a concurrent delegate queue, each stopping: neither may wait for the
    /// other (each would wait forever). The second fix is sent once the first call is made, so that it does not
    /// join it.
    @Test func overlappingCallbacksThatBothStopDoNotDeadlock() async {
        let queue = DispatchQueue(label: "concurrent delegate", attributes: .concurrent)
        let rig = ManagerRig(delegateQueue: queue)
        let inside = DispatchGroup()
        inside.enter()
        inside.enter()
        let entered = DispatchSemaphore(value: 0)
        let stopped = Locked(0)
        let delegate = DelegateRecorder { manager, event in
            guard case .locations = event else { return }
            entered.signal()
            inside.leave()
            inside.wait()   // both callbacks are inside now
            manager.stopUpdatingLocation()
            stopped.withLock { $0 += 1 }
        }
        rig.manager.delegate = delegate
        rig.manager.startUpdatingLocation()
        rig.source.send(Location.sample(second: 1))
        await onThread { entered.wait() }
        rig.source.send(Location.sample(second: 2))
        await onThread { queue.sync(flags: .barrier) {} }   // both callbacks have returned
        #expect(stopped.withLock { $0 } == 2)
        #expect(!rig.source.isRunning)
    }

    /// A stop waits for the callbacks that began before it, not for one that began after a later start.
    @Test func aStopWaitsOnlyForCallbacksThatBeganBeforeIt() async {
        let rig = ManagerRig(delegateQueue: DispatchQueue(label: "concurrent delegate", attributes: .concurrent))
        let (firstInside, releaseFirst) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let (laterInside, releaseLater) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let delegate = DelegateRecorder { _, event in
            guard case .locations(let locations) = event else { return }
            if locations == [Location.sample(second: 1)] {
                firstInside.signal()
                releaseFirst.wait()
            } else {
                laterInside.signal()
                releaseLater.wait()
            }
        }
        rig.manager.delegate = delegate
        rig.manager.startUpdatingLocation()
        rig.source.send(Location.sample(second: 1))
        await onThread { firstInside.wait() }
        let firstStop = Task { await onThread { rig.manager.stopUpdatingLocation() } }
        await rig.source.waitUntilIdle()   // the first stop has begun: it closed the session, and waits
        // Updates start again; a callback of the new generation begins and is held. (The session may be opened by
        // the stopping thread, once its close is done: wait for it before sending.)
        rig.manager.startUpdatingLocation()
        await rig.source.waitForOpening(count: 2)
        #expect(rig.source.send(Location.sample(second: 2)))
        await onThread { laterInside.wait() }
        releaseFirst.signal()
        await firstStop.value   // returns although the later callback still runs
        releaseLater.signal()
        rig.manager.stopUpdatingLocation()
    }

    /// The delegate hears of calls in the order they were decided, whichever threads decided them; a fix of another
    /// generation, or after a failure, joins no call that waits.
    @Test func theOutboxMakesCallsOldestFirstWithTheirGeneration() {
        var outbox = DelegateOutbox(bound: .default)
        let (first, second) = (Location.sample(second: 1), Location.sample(second: 2))
        let failure = LocationError(.locationUnknown, "no fix")
        var (one, two) = (LocationManagerStateMachine.Decision(), LocationManagerStateMachine.Decision())
        one.call(.locations([first]), generation: 0)
        one.transition(.open(number: 1))
        one.call(.failure(failure), generation: 0)
        two.call(.locations([second]), generation: 1)
        two.call(.heading(Heading(trueHeading: 46.5)), generation: 0)
        #expect(outbox.add(one.delegateCalls, at: .zero) == 0 && outbox.count == 2)
        #expect(outbox.add(two.delegateCalls, at: .zero) == 0 && outbox.count == 4)
        var made: [String] = []
        while let call = outbox.popFirst() {
            let generation = call.generation
            switch call.kind {
            case .locations(let locations): made.append("\(locations.map(\.shortDescription)) in \(generation)")
            case .failure(let error): made.append("\(error.code) in \(generation)")
            case .status(let status): made.append("\(status) in \(generation)")
            case .rejection(let rejection): made.append("\(rejection) in \(generation)")
            case .heading(let heading): made.append("\(heading.trueHeading)° in heading \(generation)")
            case .satellites(let sky): made.append("\(sky.count) in \(generation)")
            }
        }
        #expect(made == ["[\"1 ±5.0\"] in 0", "location unknown in 0", "[\"2 ±5.0\"] in 1", "46.5° in heading 0"])
        #expect(outbox.popFirst() == nil)
    }
}

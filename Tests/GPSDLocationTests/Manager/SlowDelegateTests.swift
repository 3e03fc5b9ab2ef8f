import Dispatch
import Foundation
@testable import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// A delegate slower than a 10 Hz receiver gets the newest fix, not a growing queue: the fixes that came during a
/// call reach it in the next, as one array, the newest last; a backlog keeps the last 2 s (by the manager's clock,
/// a manual one here), and what it drops is counted.
@Suite("LocationManager: a slow delegate", .timeLimit(.minutes(1)))
struct SlowDelegateTests {
    /// A delegate whose `didUpdateLocations` calls wait, each, until the test lets them return.
    private final class Held: Sendable {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        /// Whether every call waits, or only the first.
        let holdsEveryCall: Bool
        private let calls = Locked(0)

        init(holdsEveryCall: Bool) { self.holdsEveryCall = holdsEveryCall }

        func delegate() -> DelegateRecorder {
            DelegateRecorder { [self] _, event in
                guard case .locations = event else { return }
                let first = calls.withLock { calls in
                    defer { calls += 1 }
                    return calls == 0
                }
                guard first || holdsEveryCall else { return }
                entered.signal()
                release.wait()
            }
        }

        /// Until a held call has begun.
        func untilEntered() async { await onThread { self.entered.wait() } }
    }

    /// The fixes of each `didUpdateLocations` call, in order.
    private static func calls(_ delegate: DelegateRecorder) -> [[Location]] {
        delegate.events.compactMap { if case .locations(let fixes) = $0 { fixes } else { nil } }
    }

    /// Each call takes as long as three fixes take to come (300 ms at 10 Hz): each call after the first gets the
    /// three that came during the one before, the newest last; the newest it gets is always the newest sent.
    @Test func aDelegateSlowerThanTheFixesGetsThoseThatCameDuringItsLastCall() async {
        let rig = ManagerRig()
        let held = Held(holdsEveryCall: true)
        let delegate = held.delegate()
        rig.manager.delegate = delegate
        rig.manager.startUpdatingLocation()
        rig.source.send(StreamBacklogTests.tenth(0))
        await held.untilEntered()
        for round in 0..<20 {
            let sent = (1...3).map { StreamBacklogTests.tenth(3 * round + $0) }
            for fix in sent {
                rig.clock.advance(by: .milliseconds(100))
                rig.source.send(fix)
            }
            held.release.signal()
            await held.untilEntered()
            #expect(Self.calls(delegate).last == sent, "round \(round)")
        }
        #expect(Self.calls(delegate).count == 21)
        held.release.signal()
        rig.manager.stopUpdatingLocation()
        #expect(rig.manager.health.streamDrops == 0)
    }

    /// A call that takes 10 s at 10 Hz: when it returns, one call brings the fixes of the last 2 s, the newest last.
    @Test func aDelegateStuckForTenSecondsGetsTheLastTwoSecondsInOneCall() async {
        let rig = ManagerRig()
        let held = Held(holdsEveryCall: false)
        let delegate = held.delegate()
        rig.manager.delegate = delegate
        rig.manager.startUpdatingLocation()
        rig.source.send(StreamBacklogTests.tenth(0))
        await held.untilEntered()
        for n in 1...100 {
            rig.clock.advance(by: .milliseconds(100))
            rig.source.send(StreamBacklogTests.tenth(n))
        }
        held.release.signal()
        await onThread { rig.manager.delegateQueue.sync {} }
        let calls = Self.calls(delegate)
        #expect(calls.count == 2)
        #expect(calls.last?.last == StreamBacklogTests.tenth(100), "the newest fix last")
        #expect(calls.last == (80...100).map(StreamBacklogTests.tenth), "those of the last 2 s, ends included")
        #expect(rig.manager.health.streamDrops == 79)
        rig.manager.stopUpdatingLocation()
    }

    /// Headings are calls of their own, never joined: with the delegate queue held for 10 s at 10 Hz, the outbox
    /// keeps those of the last 2 s, and the queue holds one block for each of them, not one for each heading sent.
    @Test func headingsBehindAHeldQueueQueueNoMoreBlocksThanCallsWait() {
        let queue = DispatchQueue(label: "held")
        let rig = ManagerRig(delegateQueue: queue)
        rig.manager.startUpdatingHeading()
        queue.sync {}   // the calls decided so far made (the status a session's opening tells)
        queue.suspend()
        let sent = (1...100).map { Heading(trueHeading: Double($0), device: "/dev/test") }
        for heading in sent {
            rig.clock.advance(by: .milliseconds(100))
            rig.source.send(.report(.attitude(heading, timed: false)))
        }
        let depth = rig.manager.storage.delegateQueueDepth
        #expect(depth.calls == 21, "those decided in the last 2 s, ends included")
        #expect(depth.blocks == depth.calls, "a block for each call that waits, none for those dropped")
        queue.resume()
        rig.manager.delegateQueue.sync {}
        #expect(rig.delegate.headings.map(\.trueHeading) == (80...100).map(Double.init))
        #expect(rig.manager.storage.delegateQueueDepth == (0, 0))
        rig.manager.stopUpdatingHeading()
    }

    /// A stop still drops every call decided before it, the fixes that joined a waiting call with it.
    @Test func aStopDropsTheBacklogThatWaits() async {
        let rig = ManagerRig()
        let held = Held(holdsEveryCall: false)
        let delegate = held.delegate()
        rig.manager.delegate = delegate
        rig.manager.startUpdatingLocation()
        rig.source.send(StreamBacklogTests.tenth(0))
        await held.untilEntered()
        for n in 1...30 { rig.source.send(StreamBacklogTests.tenth(n)) }
        // The stop waits for the call that runs; let it return once the stop has begun.
        let stop = Task { await onThread { rig.manager.stopUpdatingLocation() } }
        await rig.source.waitUntilIdle()
        held.release.signal()
        await stop.value
        await onThread { rig.manager.delegateQueue.sync {} }
        #expect(Self.calls(delegate) == [[StreamBacklogTests.tenth(0)]])
    }
}

import Foundation
@testable import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// Order is kept where it is decided: the manager's storage queues each consumer's notices under its lock, in the
/// order decided, and one thread at a time hands them over (``ManagerStorage``). Tested on the storage itself:
/// its routing as a value (what a decision's actions become), then many threads deciding at once.
@Suite("Hand-over of notices", .timeLimit(.minutes(1)))
struct HandOverTests {
    private static func storage() -> ManagerStorage {
        ManagerStorage(requestTimeout: .seconds(30), jitterSeed: 1)
    }

    private static func notice(_ number: Int) -> SubscriptionNotice {
        SubscriptionNotice(id: SubscriptionID(rawValue: number), event: .location(.sample(second: number)))
    }

    typealias Decision = LocationManagerStateMachine.Decision

    /// Decides `decision` as the manager does an input's; returns what the deciding thread is to carry out.
    private static func decide(_ storage: ManagerStorage, _ decision: Decision) -> Decision {
        storage.route { decision }
    }

    /// A decision of these notices, each batch for its consumer.
    private static func notifying(_ batches: (any SubscriptionConsumer, [Int])...) -> Decision {
        var decision = Decision()
        for (consumer, numbers) in batches { decision.notifications.add(numbers.map(notice), to: consumer) }
        return decision
    }

    private static func notices(in decision: Decision) -> [Int] {
        decision.notifications.batches.flatMap { $0.notices.map(\.id.rawValue) }
    }

    // MARK: Routing, as values

    @Test func theFirstThreadToDecideForAConsumerTakesItsHandOver() {
        let storage = Self.storage()
        let consumer = Recorder()
        let decision = Self.decide(storage, Self.notifying((consumer, [1, 2])))
        #expect(Self.notices(in: decision) == [1, 2])
        #expect(storage.isHandingOver(to: consumer))
    }

    @Test func noticesDecidedDuringAHandOverQueueForItsThreadAndLeaveTheDecision() {
        let storage = Self.storage()
        let (consumer, other) = (Recorder(), Recorder())
        let first = Self.decide(storage, Self.notifying((consumer, [1])))
        // Another thread decides more for the same consumer, and something for another: only the other's stays.
        let second = Self.decide(storage, Self.notifying((consumer, [2]), (other, [7]), (consumer, [3])))
        #expect(Self.notices(in: second) == [7])
        // The first thread hands over what it carries, then what was queued meanwhile, then ends the hand-over.
        guard let notices = first.notifications.batches.first?.notices else { Issue.record("no hand-over"); return }
        storage.hand(notices, to: consumer)
        #expect(consumer.batches == [[1], [2, 3]])
        #expect(!storage.isHandingOver(to: consumer))
        #expect(storage.isHandingOver(to: other), "taken by the second decision, not yet handed over")
    }

    @Test func aHandOverThatEndedLetsTheNextDecisionTakeIt() {
        let storage = Self.storage()
        let consumer = Recorder()
        guard let notices = Self.decide(storage, Self.notifying((consumer, [1]))).notifications.batches.first?.notices else {
            Issue.record("no hand-over")
            return
        }
        storage.hand(notices, to: consumer)
        #expect(Self.notices(in: Self.decide(storage, Self.notifying((consumer, [2])))) == [2])
    }

    @Test func theRestOfADecisionStaysWhenItsNoticesAreLeftToAnotherThread() {
        let storage = Self.storage()
        let consumer = Recorder()
        _ = Self.decide(storage, Self.notifying((consumer, [1])))
        var decision = Self.notifying((consumer, [2]))
        decision.timers = [.watchdog(timer: 1, after: .seconds(5)), .reconnect(timer: 2, after: .seconds(1))]
        decision.call(.status(.stopped), generation: 0)
        let left = Self.decide(storage, decision)
        #expect(left.notifications.isEmpty)
        #expect(left.timers.count == 2 && left.delegateCalls.count == 1)
    }

    @Test func anObserverBusyOnAnotherThreadGetsItsEventsQueued() {
        let storage = Self.storage()
        let told = Locked<[String]>([])
        let a: SubscriptionTable.Observer = { event in told.withLock { $0.append("a \(event)") } }
        let b: SubscriptionTable.Observer = { event in told.withLock { $0.append("b \(event)") } }
        var (first, second) = (Decision(), Decision())
        first.observations.add(.status(.stopped), for: [(1, a)])
        second.observations.add(.status(.noDevice), for: [(1, a), (2, b)])
        first = Self.decide(storage, first)
        second = Self.decide(storage, second)
        // a's second event waits for the thread telling a; b's is this one's to tell.
        #expect(first.observations.batches.map(\.id) == [1] && second.observations.batches.map(\.id) == [2])
        storage.tell([.status(.stopped)], to: a, id: 1)
        #expect(told.withLock { $0 } == ["a \(ManagerEvent.status(.stopped))", "a \(ManagerEvent.status(.noDevice))"])
    }

    // MARK: Many threads at once

    /// Threads decide notices for three consumers at random, each decision numbered under the storage's lock, and
    /// hand over what they take: every consumer gets every notice decided for it, once, in the order decided, and
    /// never two batches at once. Run under ThreadSanitizer by the test script's TSan pass.
    @Test(arguments: [1, 2, 3])
    func manyThreadsDecidingForOneConsumerKeepItsOrder(seed: UInt64) async {
        let storage = Self.storage()
        let consumers = [Recorder(), Recorder(), Recorder()]
        let decided = Locked<[[Int]]>(Array(repeating: [], count: consumers.count))
        let threads = 4
        let decisionsPerThread = 300
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<threads {
                group.addTask {
                    await onThread {
                        var random = SplitMix64(seed: seed &* 1_000 &+ UInt64(thread))
                        for _ in 0..<decisionsPerThread {
                            // One decision: notices for one or two consumers, numbered as decided, under the
                            // storage's lock.
                            let decision = storage.route {
                                var decision = Decision()
                                for _ in 0...(random.next() % 2) {
                                    let which = Int(random.next() % UInt64(consumers.count))
                                    let count = 1 + Int(random.next() % 3)
                                    let numbers = decided.withLock { decided in
                                        let start = decided[which].count
                                        decided[which] += start..<start + count
                                        return Array(start..<start + count)
                                    }
                                    decision.notifications.add(numbers.map(Self.notice), to: consumers[which])
                                }
                                return decision
                            }
                            decision.notifications.forEach { storage.hand($0.notices, to: $0.consumer) }
                        }
                    }
                }
            }
        }
        for (index, consumer) in consumers.enumerated() {
            let expected = decided.withLock { $0[index] }
            #expect(consumer.batches.joined().map { $0 } == expected, "consumer \(index): every notice once, in order")
            #expect(!consumer.overlapped, "consumer \(index) was never handed two batches at once")
            #expect(!storage.isHandingOver(to: consumer))
        }
        #expect(decided.withLock { $0.joined().count } >= threads * decisionsPerThread)
    }
}

/// Notices left queued for a thread that is handing them over are in no consumer's buffer yet: a replay counts
/// them, and waits for them as for a buffer, instead of running ahead of a hand-over held up.
@Suite("Hand-over and a replay", .timeLimit(.minutes(1)))
struct HandOverReplayTests {
    /// ``ReplayBackpressureTests``' recording: fixes enough for three of the replay's reads.
    static let count = ReplayBackpressureTests.count
    static let recording = ReplayBackpressureTests.recording
    static let fixesPerRead = ReplayBackpressureTests.fixesPerRead

    @Test func aReplayWaitsForNoticesQueuedBehindAHeldUpHandOver() async throws {
        let source = RecordingSource(.contents(Self.recording, name: "handover.gpsd.json"), pace: .asFastAsPossible,
                                     backlogLimit: 4)
        let manager = LocationManager(source: source, clock: ManualManagerClock())
        let backpressure = try #require(source.backpressure)
        // A real-time handler (no backpressure of its own) opens the session, and holds the replay at its first fix
        // until the held-up consumer is in place.
        let firstFix = DispatchSemaphore(value: 0)
        let goOn = DispatchSemaphore(value: 0)
        let handled = Locked(0)
        let realTime = manager.realTimeUpdates(.continuous(), timingCalls: false) { _ in
            if handled.withLock({ count in
                count += 1
                return count == 1
            }) {
                firstFix.signal()
                goOn.wait()
            }
        }
        await onThread { firstFix.wait() }
        // A timeline's consumer: subscribing hands it the status now, on the subscribing thread, which it holds up.
        let consumer = HeldUpConsumer()
        let id = manager.reserveSubscription()
        let subscribing = Task { await onThread { manager.subscribe(id, .timeline(), consumer: consumer) } }
        await onThread { consumer.entered.wait() }
        goOn.signal()
        // The replay's fixes for the timeline queue behind the held-up hand-over, and the replay waits for them.
        await backpressure.heldBack()
        #expect(handled.withLock { $0 } < Self.count, "the replay waited before its end")
        consumer.release.signal()
        #expect(await subscribing.value)
        // Until the recording's last fix: those of the first read were decided before the timeline subscribed.
        while consumer.fixes.last != Self.count - 1, !Task.isCancelled { await onThread { consumer.received.wait() } }
        let fixes = consumer.fixes
        #expect(fixes == Array((fixes.first ?? 0)..<Self.count), "every fix from its first on, once, in order")
        #expect(consumer.largestBatch < 4 + Self.fixesPerRead,
                "queued behind the hand-over: under the limit and one read's fixes, \(consumer.largestBatch)")
        await realTime.cancel()
        manager.unsubscribe(id)
    }
}

/// Holds up the first call until released; keeps the seconds of the fixes it is handed, and the largest batch.
private final class HeldUpConsumer: SubscriptionConsumer {
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let received = DispatchSemaphore(value: 0)
    private let state = Locked<(calls: Int, fixes: [Int], largest: Int)>((0, [], 0))
    var fixes: [Int] { state.withLock { $0.fixes } }
    var largestBatch: Int { state.withLock { $0.largest } }

    func receive(_ notices: [SubscriptionNotice]) {
        let first = state.withLock { state in
            state.calls += 1
            let seconds = notices.compactMap { notice -> Int? in
                guard case .location(let fix) = notice.event else { return nil }
                return Int(fix.timestamp.timeIntervalSince1970 - ReportLines.epoch)
            }
            state.fixes += seconds
            state.largest = max(state.largest, seconds.count)
            return state.calls == 1
        }
        if first {
            entered.signal()
            release.wait()
        }
        received.signal()
    }
}

/// Keeps the numbers (ids) of each batch it is handed, and notes whether two batches were ever handed at once.
private final class Recorder: SubscriptionConsumer {
    private let state = Locked<(batches: [[Int]], inside: Bool, overlapped: Bool)>(([], false, false))
    var batches: [[Int]] { state.withLock { $0.batches } }
    var overlapped: Bool { state.withLock { $0.overlapped } }

    func receive(_ notices: [SubscriptionNotice]) {
        state.withLock { state in
            if state.inside { state.overlapped = true }
            state.inside = true
            state.batches.append(notices.map(\.id.rawValue))
        }
        // A moment for another thread's hand-over of this consumer to overlap, were it allowed.
        for _ in 0..<50 { _ = SystemThread.currentID }
        state.withLock { $0.inside = false }
    }
}

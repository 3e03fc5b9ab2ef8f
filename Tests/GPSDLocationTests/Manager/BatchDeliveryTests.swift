import Foundation
@testable import GPSDLocation
import GPSDSystem
import GPSDTestSupport
import Testing

/// Reports that came together (one read) are decided under one lock and handed to each consumer in one batch,
/// so its stream wakes once for all of them: in order, nothing lost, nothing moved across a session's
/// opening or closing.
@Suite("Batch delivery", .timeLimit(.minutes(1)))
struct BatchDeliveryTests {
    @Test func fixesOfOneReadReachAConsumerAsOneBatchInOrder() async throws {
        let rig = AsyncRig()
        let recorder = BatchRecorder()
        let id = rig.gps.manager.reserveSubscription()
        #expect(rig.gps.manager.subscribe(id, .continuous(delivery: .asReported), consumer: recorder))
        await rig.source.waitForOpening()
        let fixes = (1...4).map { Location.sample(second: $0) }
        rig.source.send([.connected] + fixes.map { .report(.fix($0)) } + [.skippedLine])
        rig.source.send(Location.sample(second: 5))

        let batches = recorder.batches
        #expect(batches.map(\.count) == [4, 1])
        #expect(batches.joined().map(\.event) == (fixes + [Location.sample(second: 5)]).map { .location($0) })
        #expect(rig.gps.manager.statistics.skippedLines == 1)
        rig.gps.manager.unsubscribe(id)
    }

    @Test func aOneShotRequestInTheBatchTakesTheFirstFixAndTheStreamTakesEvery() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates()
        let request = rig.request()
        await rig.source.waitForOpening()
        while rig.gps.manager.subscriptionCount < 2, !Task.isCancelled { await Task.yield() }
        try Task.checkCancellation()
        let fixes = (1...3).map { Location.sample(second: $0) }
        rig.source.send(fixes.map { .report(.fix($0)) })
        #expect(await request.value == .fix(fixes[0]))
        var received: [Location] = []
        for try await fix in updates {
            received.append(fix)
            if received.count == 3 { break }
        }
        #expect(received == fixes)
    }

    @Test func aBatchEndingInAFailureDeliversItsFixesFirst() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates()
        await rig.source.waitForOpening()
        let fixes = (1...3).map { Location.sample(second: $0) }
        let lost = LocationError(.connectionLost, "connection to gpsd at localhost:2947 lost")
        rig.source.send(fixes.map { .report(.fix($0)) } + [.failed(lost)])
        var received: [Location] = []
        await #expect(throws: lost) {
            for try await fix in updates { received.append(fix) }
        }
        #expect(received == fixes)
    }

    @Test func manyBatchesThroughUpdatesArriveWholeAndInOrder() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates(bufferingPolicy: .unbounded)
        await rig.source.waitForOpening()
        let fixes = (1...2_000).map { Location.sample(second: $0) }
        let consumer = Task {
            var received: [Location] = []
            for try await fix in updates {
                received.append(fix)
                if received.count == fixes.count { break }
            }
            return received
        }
        for start in stride(from: 0, to: fixes.count, by: 137) {
            rig.source.send(fixes[start..<min(start + 137, fixes.count)].map { .report(.fix($0)) })
        }
        #expect(try await consumer.value == fixes)
    }

    // MARK: Merging notices

    @Test func noticesForOneConsumerJoinItsBatchWhateverIsDecidedBetween() {
        let (first, second) = (BatchRecorder(), BatchRecorder())
        // Told apart by their ids.
        func notice(_ number: Int) -> SubscriptionNotice {
            SubscriptionNotice(id: SubscriptionID(rawValue: number), event: .location(.sample(second: number)))
        }
        var decision = LocationManagerStateMachine.Decision()
        decision.notifications.add([notice(1)], to: first)
        decision.observations.add(.status(.stopped), for: [(1, { _ in })])
        decision.notifications.add([notice(1)], to: second)
        decision.call(.locations([.sample(second: 2)]), generation: 0)
        decision.timers.append(.watchdog(timer: 1, after: .seconds(5)))
        decision.notifications.add([notice(2), notice(3)], to: first)
        decision.call(.heading(Heading(trueHeading: 46.5)), generation: 0)
        decision.notifications.add(.location(.sample(second: 4)), for: SubscriptionID(rawValue: 4), to: first)
        // Each consumer's notices are one batch, in the order decided, the consumers in the order first notified;
        // the other parts keep their own order.
        let batches = decision.notifications.batches.map { batch in
            (batch.consumer === first ? "first " : batch.consumer === second ? "second " : "other ")
                + batch.notices.map { String($0.id.rawValue) }.joined(separator: ",")
        }
        #expect(batches == ["first 1,2,3,4", "second 1"])
        #expect(decision.delegateCalls.map(\.isHeading) == [false, true])
        #expect(decision.observations.batches.map(\.events.count) == [1])
        #expect(decision.timers.count == 1 && !decision.opensOrClosesASession)
    }

    @Test func observersEventsJoinEachObserversBatch() {
        var observations = Observations()
        let (a, b): (SubscriptionTable.Observer, SubscriptionTable.Observer) = ({ _ in }, { _ in })
        observations.add(.status(.stopped), for: [(1, a)])
        observations.add(.status(.noDevice), for: [(1, a), (2, b)])
        observations.add(.sessionEnded(nil), for: [(2, b)])
        #expect(observations.batches.map(\.id) == [1, 2])
        #expect(observations.batches.map { $0.events.map { "\($0)" } } == [
            ["\(ManagerEvent.status(.stopped))", "\(ManagerEvent.status(.noDevice))"],
            ["\(ManagerEvent.status(.noDevice))", "\(ManagerEvent.sessionEnded(nil))"],
        ])
    }
}

/// A consumer that keeps each batch it is given, as given.
private final class BatchRecorder: SubscriptionConsumer {
    private let received = Locked<[[SubscriptionNotice]]>([])
    var batches: [[SubscriptionNotice]] { received.withLock { $0 } }
    func receive(_ notices: [SubscriptionNotice]) { received.withLock { $0.append(notices) } }
}

import Foundation
@testable import GPSDLocation
import GPSDTestSupport
import Testing

/// Reports that came together (one read) are decided under one lock and handed to each consumer in one batch,
/// so its stream wakes once for all of them: in order, numbered, nothing lost, nothing moved across a session's
/// opening or closing.
@Suite("Batch delivery", .timeLimit(.minutes(1)))
struct BatchDeliveryTests {
    @Test func fixesOfOneReadReachAConsumerAsOneNumberedBatch() async throws {
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
        #expect(batches.joined().map(\.number) == [1, 2, 3, 4, 5])
        #expect(batches.joined().map(\.event) == (fixes + [Location.sample(second: 5)]).map { .location($0) })
        #expect(rig.gps.manager.statistics.skippedLines == 1)
        rig.gps.manager.unsubscribe(id)
    }

    @Test func aOneShotRequestInTheBatchTakesTheFirstFixAndTheStreamTakesEvery() async throws {
        let rig = AsyncRig()
        let updates = rig.gps.updates()
        let request = rig.request()
        await rig.source.waitForOpening()
        while rig.gps.manager.subscriptionCount < 2 { await Task.yield() }
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

    @Test func noticesForOneConsumerJoinItsBatchAcrossObservationsAndDelegateCalls() {
        let (first, second) = (BatchRecorder(), BatchRecorder())
        let id = SubscriptionID(rawValue: 7)
        func notice(_ number: Int) -> SubscriptionNotice {
            SubscriptionNotice(id: id, number: UInt64(number), event: .location(.sample(second: number)))
        }
        var batch = ActionBatch()
        batch.append(.notify(first, [notice(1)]))
        batch.append(.observe([], Observation(event: .status(.stopped), sequence: 1)))
        batch.append(.notify(second, [notice(1)]))
        batch.append(.deliver([.sample(second: 2)], generation: 0))
        batch.append(.notify(first, [notice(2), notice(3)]))
        batch.append(.notify(first, [notice(4)]))
        let actions = batch.actions
        #expect(actions.count == 4)
        guard case .notify(let consumer, let notices) = actions[0] else {
            Issue.record("expected the first consumer's batch first, got \(actions[0])")
            return
        }
        #expect(consumer === first)
        #expect(notices.map(\.number) == [1, 2, 3, 4])
    }

    @Test func noticesNeverMoveAcrossAClosingOrATimer() {
        let recorder = BatchRecorder()
        let notice = SubscriptionNotice(id: SubscriptionID(rawValue: 1), number: 1, event: .ended(nil))
        for barrier: LocationManagerStateMachine.Action in [
            .closeSession(number: 1, NoSession()), .openSession(number: 2),
            .scheduleWatchdog(timer: 1, after: .seconds(1)),
        ] {
            var batch = ActionBatch()
            batch.append(.notify(recorder, [notice]))
            batch.append(barrier)
            batch.append(.notify(recorder, [notice]))
            #expect(batch.actions.count == 3, "\(barrier)")
        }
    }
}

/// A consumer that keeps each batch it is given, as given.
private final class BatchRecorder: SubscriptionConsumer {
    private let received = Locked<[[SubscriptionNotice]]>([])
    var batches: [[SubscriptionNotice]] { received.withLock { $0 } }
    func receive(_ notices: [SubscriptionNotice]) { received.withLock { $0.append(notices) } }
}

private struct NoSession: SourceSession {
    func requestHeldFix() {}
    func close() {}
}

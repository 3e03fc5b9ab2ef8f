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

    @Test func noticesForOneConsumerJoinItsBatchAcrossObservationsAndDelegateCalls() {
        let (first, second) = (BatchRecorder(), BatchRecorder())
        // Told apart by their ids.
        func notice(_ number: Int) -> SubscriptionNotice {
            SubscriptionNotice(id: SubscriptionID(rawValue: number), event: .location(.sample(second: number)))
        }
        var batch = ActionBatch()
        batch.append(.notify(first, [notice(1)]))
        batch.append(.observe([], .status(.stopped)))
        batch.append(.notify(second, [notice(1)]))
        batch.append(.deliver([.sample(second: 2)], generation: 0))
        batch.append(.notify(first, [notice(2), notice(3)]))
        batch.append(.deliverHeading(Heading(trueHeading: 46.5), generation: 0))
        batch.append(.notify(first, [notice(4)]))
        // The first consumer's notices join its batch in the first slot; everything else keeps its place.
        func describe(_ action: LocationManagerStateMachine.Action) -> String {
            guard case .notify(let consumer, let notices) = action else { return Self.describe(action) }
            let name = consumer === first ? "first" : consumer === second ? "second" : "other"
            return "notify \(name) " + notices.map { String($0.id.rawValue) }.joined(separator: ",")
        }
        #expect(batch.actions.map(describe) == ["notify first 1,2,3,4", "observe", "notify second 1", "deliver", "deliver heading"])
    }

    @Test func noticesNeverMoveAcrossAnOpeningAClosingARequestOrATimer() {
        let recorder = BatchRecorder()
        func notice(_ number: Int) -> SubscriptionNotice {
            SubscriptionNotice(id: SubscriptionID(rawValue: number), event: .location(.sample(second: 1)))
        }
        for barrier: LocationManagerStateMachine.Action in [
            .openSession(number: 2), .closeSession(number: 1, NoSession()), .requestHeldFix(NoSession()),
            .scheduleRequestTimeout(request: 1, after: .seconds(1)), .scheduleReconnect(timer: 1, after: .seconds(1)),
            .scheduleWatchdog(timer: 1, after: .seconds(1)),
        ] {
            var batch = ActionBatch()
            batch.append(.notify(recorder, [notice(1)]))
            batch.append(barrier)
            batch.append(.notify(recorder, [notice(2)]))
            batch.append(.notify(recorder, [notice(3)]))
            let barrierName = Self.describe(barrier)
            // After the barrier the consumer's notices start a batch of their own, and join it.
            #expect(batch.actions.map(Self.describe) == ["notify 1", barrierName, "notify 2,3"], "\(barrier)")
        }
    }

    /// An action's kind, and for a notification the ids of its notices.
    private static func describe(_ action: LocationManagerStateMachine.Action) -> String {
        switch action {
        case .notify(_, let notices): "notify " + notices.map { String($0.id.rawValue) }.joined(separator: ",")
        case .openSession: "open"
        case .closeSession: "close"
        case .requestHeldFix: "request held fix"
        case .scheduleRequestTimeout: "request timeout"
        case .scheduleReconnect: "reconnect timer"
        case .scheduleWatchdog: "watchdog"
        case .observe: "observe"
        case .deliver: "deliver"
        case .deliverHeading: "deliver heading"
        case .reportSatellites: "satellites"
        case .fail: "fail"
        case .reportStatus: "status"
        case .reportRejection: "rejection"
        case .log: "log"
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
